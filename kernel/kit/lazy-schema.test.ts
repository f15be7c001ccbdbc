import * as z from "zod/mini";
import * as classic from "zod";
import { describe, expect, it } from "vitest";
import { lazySchema } from "./lazy-schema.js";

describe("lazySchema", () => {
  it("builds the schema at its first use, once, and stands for it", () => {
    let built = 0;
    const Point = lazySchema(() => {
      built++;
      return z.object({ x: z.number(), y: z.number() });
    });
    const Line = lazySchema(() => z.object({ from: Point, to: z.optional(Point) }));
    expect(built).toBe(0);
    expect(Line.safeParse({ from: { x: 1, y: 2 } }).success).toBe(true);
    expect(built).toBe(1);
    expect(z.safeParse(Point, { x: 1 }).success).toBe(false);
    expect(Point.safeParse({ x: 1, y: 2 }).data).toEqual({ x: 1, y: 2 });
    expect(Point instanceof z.ZodMiniObject).toBe(true);
    const real = z.object({ x: z.number(), y: z.number() });
    real.safeParse({});
    expect(Object.keys(Point).sort()).toEqual(Object.keys(real).sort()); // the schema's, not the builder's
    expect(Object.getOwnPropertyDescriptor(Point, "_zod")?.value.def.type).toBe("object");
    Object.defineProperty(Point, "tag", { value: 1, configurable: true });
    expect((Point as unknown as { tag: number }).tag).toBe(1);
    expect(z.toJSONSchema(Line)).toMatchObject({ properties: { from: { properties: { x: { type: "number" } } } }, required: ["from"] });
    expect(built).toBe(1);
  });

  it("works with classic zod schemas too", () => {
    const Name = lazySchema(() => classic.string().min(2));
    expect(Name.safeParse("a").success).toBe(false);
    expect(classic.object({ name: Name }).parse({ name: "ab" })).toEqual({ name: "ab" });
  });

  it("keeps the built schema's metadata and its methods' `this`", () => {
    const Text = lazySchema(() => z.string().check(z.describe("some text")));
    expect(z.toJSONSchema(z.object({ t: Text }))).toMatchObject({ properties: { t: { type: "string", description: "some text" } } });
    expect(z.toJSONSchema(Text)).toMatchObject({ description: "some text" });
    const Name = lazySchema(() => classic.string().describe("a name"));
    expect(classic.toJSONSchema(Name)).toMatchObject({ description: "a name" });
    const reg = classic.registry<{ note: string }>();
    expect(Name.register(reg, { note: "n" })).toBe(Name);
    expect(reg.get(Name)).toEqual({ note: "n" });
    expect(() => Object.freeze(Name)).toThrow(TypeError);
    expect(Name.safeParse("x").success).toBe(true);
  });

  it("throws on a schema that reads itself while being built, and builds again after an error", () => {
    const Self: z.ZodMiniType = lazySchema(() => z.object({ again: Self._zod.def as never }));
    expect(() => Self.safeParse({})).toThrow(/read itself while being built/);
    let fail = true;
    const Flaky = lazySchema(() => {
      if (fail) throw new Error("not yet");
      return z.string();
    });
    expect(() => Flaky.safeParse("x")).toThrow("not yet");
    fail = false;
    expect(Flaky.safeParse("x").success).toBe(true);
  });
});
