/**
 * "Did you mean …?" for names a user typed: a settings key, a plugin name in `disable`.
 */

/**
 * The candidate nearest to `name`: equal ignoring case first, else the fewest edits (insert,
 * delete, substitute, swap two neighbours), if at most `maxEdits`. Ties go to the earlier
 * candidate.
 */
export function nearestName(name: string, candidates: Iterable<string>, maxEdits = 2): string | undefined {
  let best: string | undefined;
  let bestDist = maxEdits + 1;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    if (Math.abs(c.length - name.length) >= bestDist) continue;
    const d = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (d < bestDist) [best, bestDist] = [c, d];
  }
  return best;
}

/** Optimal string alignment distance: Levenshtein plus adjacent swaps ("modle" → "model" is 1). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
