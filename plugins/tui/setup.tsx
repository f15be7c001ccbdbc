/**
 * The first-run setup screen (LARIK-REFERENCE §1): shown by `larik` in a terminal when no
 * model is configured (no `--model`, `-c`/`--resume`, `model` setting or default key). It
 * lists what setup-detect.ts found, tests the chosen connection by listing its models, lets the
 * user pick (type to filter) or type a model id, and saves to `~/.config/larik/config.json`.
 * esc aborts; the caller then prints a hint.
 */
import { Box, Text, useApp, useInput, useStdin } from "ink";
import { useEffect, useMemo, useRef, useState } from "react";
import { errorText, personalSettingsFile, tildePath, type Host } from "../../kernel/index.js";
import { catalogModels, detectCandidates, listModels, saveChoice, type DetectOptions, type SetupCandidate } from "./setup-detect.js";
import { textThenEnter } from "./keys.js";

type Step =
  | { type: "detecting" }
  | { type: "choose"; candidates: SetupCandidate[]; selected: number }
  | { type: "testing"; candidate: SetupCandidate }
  | { type: "models"; candidate: SetupCandidate; models: string[]; filter: string; selected: number; error?: string }
  | { type: "manual"; candidate?: SetupCandidate; text: string; error?: string }
  | { type: "saving"; spec: string }
  /** The frame left in the terminal once setup ends: what was saved where, or nothing (aborted). */
  | { type: "done"; spec?: string };

/** Props of {@link Setup}. */
export interface SetupProps {
  host: Host;
  /** Called once with the saved spec, or undefined when the user aborted. */
  onDone(spec: string | undefined): void;
  detect?: DetectOptions;
}

const VISIBLE = 10;

/** The setup wizard. */
export function Setup({ host, onDone, detect }: SetupProps) {
  const [step, setStep] = useState<Step>({ type: "detecting" });
  const [found, setFound] = useState<SetupCandidate[]>([]);
  const { isRawModeSupported } = useStdin();
  const { exit } = useApp();

  const finish = (spec: string | undefined) => {
    onDone(spec);
    setStep({ type: "done", spec });
  };
  // Ink leaves the last frame on screen: exit once that is the one line saying what was saved
  useEffect(() => {
    if (step.type === "done") exit();
  }, [step, exit]);

  useEffect(() => {
    let live = true;
    void detectCandidates(host, detect).then((candidates) => {
      if (!live) return;
      setFound(candidates);
      setStep({ type: "choose", candidates, selected: 0 });
    });
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const openCandidate = (c: SetupCandidate) => {
    setStep({ type: "testing", candidate: c });
    listModels(c, host.env)
      .then((models) => setStep({ type: "models", candidate: c, models, filter: "", selected: 0, error: models.length ? undefined : "the server lists no models" }))
      .catch((err: unknown) => {
        const fallback = catalogModels(host, c.provider);
        setStep({ type: "models", candidate: c, models: fallback, filter: "", selected: 0, error: `connection test failed: ${errorText(err)}` });
      });
  };

  const save = (c: SetupCandidate | undefined, model: string) => {
    const spec = c ? `${c.provider}/${model}` : model;
    setStep({ type: "saving", spec });
    const done = c ? saveChoice(host, c, model) : saveManual(host, model);
    done.then(finish).catch((err: unknown) => setStep({ type: "manual", candidate: c, text: model, error: errorText(err) }));
  };

  const filtered = useMemo(() => (step.type === "models" ? matchingModels(step.models, step.filter) : []), [step]);
  // Ink re-subscribes a new handler only after the frame is painted; keys arriving in between
  // reach the previous handler, so it reads the latest state through a ref
  const latest = useRef({ step, filtered });
  latest.current = { step, filtered };

  useInput(
    (input, key) => {
      const { step, filtered } = latest.current;
      if (step.type === "done") return; // answered once
      if (key.ctrl && input === "c") return finish(undefined);
      // "ollama/llama3\r" in one chunk (pasted, or typed faster than a frame) is the text, then Enter
      const typedThenEnter = textThenEnter(input);
      const enter = key.return || typedThenEnter !== undefined;
      switch (step.type) {
        case "choose": {
          const n = step.candidates.length + 1;
          if (key.escape) return finish(undefined);
          if (key.upArrow) setStep({ ...step, selected: (step.selected + n - 1) % n });
          else if (key.downArrow || key.tab) setStep({ ...step, selected: (step.selected + 1) % n });
          else if (key.return) {
            const c = step.candidates[step.selected];
            if (c) openCandidate(c);
            else setStep({ type: "manual", text: "" });
          }
          return;
        }
        case "models": {
          if (key.escape) return setStep({ type: "choose", candidates: found, selected: 0 });
          const n = filtered.length + 1;
          if (key.upArrow) setStep({ ...step, selected: (step.selected + n - 1) % n });
          else if (key.downArrow || key.tab) setStep({ ...step, selected: (step.selected + 1) % n });
          else if (enter) {
            const filter = step.filter + (typedThenEnter ?? "");
            // text that came with the Enter filters first, which selects the first match
            const m = typedThenEnter ? matchingModels(step.models, filter)[0] : filtered[step.selected];
            if (m) save(step.candidate, m);
            else setStep({ type: "manual", candidate: step.candidate, text: filter });
          } else if (key.backspace || key.delete) setStep({ ...step, filter: step.filter.slice(0, -1), selected: 0 });
          else if (input && !key.ctrl && !key.meta) setStep({ ...step, filter: step.filter + input, selected: 0 });
          return;
        }
        case "manual": {
          if (key.escape) return finish(undefined);
          if (enter) {
            const text = step.text + (typedThenEnter ?? "");
            const t = text.trim();
            if (!t) return;
            if (!step.candidate && !t.includes("/")) return setStep({ ...step, text, error: "write the model as provider/model, e.g. anthropic/claude-sonnet-4-5" });
            return save(step.candidate, t);
          }
          if (key.backspace || key.delete) setStep({ ...step, text: step.text.slice(0, -1), error: undefined });
          else if (input && !key.ctrl && !key.meta) setStep({ ...step, text: step.text + input, error: undefined });
          return;
        }
        default:
          if (key.escape) finish(undefined);
      }
    },
    { isActive: isRawModeSupported === true },
  );

  if (step.type === "done") {
    return step.spec ? <Text dimColor>{`model ${step.spec} saved in ${tildePath(personalSettingsFile(host.env), host.env)}`}</Text> : null;
  }
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1}>
      <Text bold color="cyan">
        Larik setup: no model is configured yet
      </Text>
      {step.type === "detecting" ? <Text dimColor>Looking for Ollama, LM Studio and API keys…</Text> : null}
      {step.type === "choose" ? (
        <>
          <Text>{step.candidates.length ? "Connect to:" : "No local server or API key found. Start Ollama or LM Studio, export a key (ANTHROPIC_API_KEY, OPENAI_API_KEY …), or:"}</Text>
          {[...step.candidates.map((c) => c.label), "Type a model spec (provider/model)"].map((label, i) => (
            <Text key={i} color={i === step.selected ? "cyan" : undefined}>{`${i === step.selected ? "❯" : " "} ${label}`}</Text>
          ))}
          <Text dimColor>↑/↓ choose · enter connects · esc quits</Text>
        </>
      ) : null}
      {step.type === "testing" ? <Text dimColor>{`Testing ${step.candidate.label}…`}</Text> : null}
      {step.type === "models" ? (
        <>
          {step.error ? <Text color="red">{step.error}</Text> : <Text color="green">{`Connected to ${step.candidate.label}`}</Text>}
          <Text>
            {"Model: "}
            <Text color="cyan">{step.filter}</Text>
            <Text inverse> </Text>
            <Text dimColor>{step.models.length ? `  (${filtered.length} of ${step.models.length}; type to filter)` : ""}</Text>
          </Text>
          {[...filtered.slice(Math.max(0, step.selected - VISIBLE + 1), Math.max(0, step.selected - VISIBLE + 1) + VISIBLE), undefined].map((m, i) => {
            const index = m === undefined ? filtered.length : Math.max(0, step.selected - VISIBLE + 1) + i;
            const active = index === step.selected;
            return (
              <Text key={m ?? "(type)"} color={active ? "cyan" : undefined}>
                {`${active ? "❯" : " "} ${m ?? (step.filter ? `use "${step.filter}"` : "type a model id")}`}
              </Text>
            );
          })}
          <Text dimColor>enter saves it as your default in ~/.config/larik/config.json · esc goes back</Text>
        </>
      ) : null}
      {step.type === "manual" ? (
        <>
          <Text>{step.candidate ? `Model id for ${step.candidate.provider}:` : "Model spec (provider/model):"}</Text>
          <Text>
            {`› ${step.text}`}
            <Text inverse> </Text>
          </Text>
          {step.error ? <Text color="red">{step.error}</Text> : null}
          <Text dimColor>enter saves · esc quits</Text>
        </>
      ) : null}
      {step.type === "saving" ? <Text dimColor>{`Saving ${step.spec}…`}</Text> : null}
    </Box>
  );
}

/** The models whose id contains `filter`, ignoring case, in their order. */
function matchingModels(models: string[], filter: string): string[] {
  const f = filter.toLowerCase();
  return models.filter((m) => m.toLowerCase().includes(f));
}

async function saveManual(host: Host, spec: string): Promise<string> {
  const { updatePersonalSettings, resolveModel } = await import("../../kernel/index.js");
  // resolve first so a typo is reported here rather than after saving
  resolveModel(spec, host.providers, host.settings, host.env);
  await updatePersonalSettings((cur) => ({ ...cur, model: spec }), host.env);
  host.settings.model = spec;
  return spec;
}
