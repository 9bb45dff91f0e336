/**
 * Shared by the flow-control tests (SPEC §20): scheduling a run of given length in a scope, and
 * counting runs at once from an effects log.
 */
import { Schedule, type Task } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { type DurableScheduler, Handler } from "../src/index.ts"

/**
 * Schedules `id` of `handler` (whose payload is `{ ms }`: how long its run takes, virtual ms) due
 * at `at`, with `more` options: its group, key or priority.
 */
export const due = (
  d: DurableScheduler.DurableSchedulerShape,
  handler: Handler.Any,
  id: string,
  ms: number,
  at = 0,
  more: { readonly group?: string; readonly key?: string; readonly priority?: Task.Priority } = {},
) => d.schedule({ id, handler, payload: { ms }, schedule: Schedule.once(at), ...more })

/**
 * A handler `h` whose runs take `p.ms` (virtual) and note their starts in `starts`, as
 * `id@startedAt`.
 */
export const timed = () => {
  const starts: Array<string> = []
  const handler = Handler.make("h", Schema.Struct({ ms: Schema.Number }), (p, run) =>
    Effect.suspend(() => {
      starts.push(`${run.id}@${run.startedAt}`)
      return Effect.sleep(p.ms)
    }),
  )
  return { starts, handler }
}

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
