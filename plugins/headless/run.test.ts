import { describe, expect, it } from "vitest";
import { denialReason } from "./run.js";

describe("denialReason", () => {
  it("names the modes that would allow more than the run's own, and an allow rule", () => {
    expect(denialReason('bash(npm test*)')).toBe(
      'headless mode cannot ask for permission: rerun with --mode accept-edits or --mode yolo, or an allow rule such as "bash(npm test*)" in permissions.allow',
    );
    expect(denialReason(undefined, "plan")).toMatch(/rerun with --mode accept-edits or --mode yolo, or an allow rule in permissions\.allow$/);
    // already in accept-edits (or auto): suggesting it again would be no way out
    for (const mode of ["accept-edits", "auto"] as const) {
      const reason = denialReason("bash(touch*)", mode);
      expect(reason).toContain("rerun with --mode yolo,");
      expect(reason).not.toContain("accept-edits");
    }
  });
});
