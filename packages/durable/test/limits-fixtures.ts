/** Shared by the flow-control tests (SPEC §20): counting runs at once from an effects log. */

/** One line of an effects log: a run's start or end. */
export interface Effect_ {
  readonly kind: "start" | "end"
  readonly id: string
  readonly at: number
}

/** The most runs of `ids` running at once, by the log's order of starts and ends. */
export const peak = (log: ReadonlyArray<Effect_>, ids: (id: string) => boolean) => {
  let now = 0
  let max = 0
  for (const e of log) {
    if (!ids(e.id)) continue
    now += e.kind === "start" ? 1 : -1
    max = Math.max(max, now)
  }
  return max
}
