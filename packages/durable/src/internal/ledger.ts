/**
 * @internal
 * A task's ledger: its runs and its events, merged in the order they happened.
 */

import type { Occurrence } from "./env.ts"
import type { EventEntry, RunEntry } from "./model.ts"

/**
 * At equal times and fences, a cancel comes before the run it cut short, slots a run's policy
 * skipped or coalesced come after it, and a resume after the slots it skipped.
 */
const rank = (o: Occurrence): number =>
  o.kind === "ran"
    ? 1
    : o.kind === "skipped" || o.kind === "coalesced"
      ? 2
      : o.kind === "resumed"
        ? 3
        : 0

/** Runs and events of one task, oldest first. */
export const merge = (
  runs: ReadonlyArray<RunEntry>,
  events: ReadonlyArray<EventEntry>,
): Array<Occurrence> => {
  const out: Array<{ at: number; fence: number; o: Occurrence }> = [
    ...runs.map((r) => ({ at: r.finishedAt, fence: r.fence, o: { kind: "ran" as const, ...r } })),
    ...events.map((e) => ({ at: e.at, fence: e.fence ?? 0, o: e })),
  ]
  return out
    .sort((a, b) => a.at - b.at || a.fence - b.fence || rank(a.o) - rank(b.o))
    .map((x) => x.o)
}
