/**
 * @internal
 * A debounced schedule's replacement of its key's pending holder (SPEC §20.3): the durable
 * `update` (SPEC §15) of the holder with the options the request gives, decided by the same
 * `decideUpdate` and recorded by the same `updated` event, so a replacement is an update.
 */
import { Declared, Errors } from "@tickwork/core"
import type { Metrics } from "@tickwork/runtime"
import { Effect } from "effect"
import type * as Handler from "../Handler.ts"
import type { TaskOptions } from "./accept.ts"
import * as Controls from "./controls.ts"
import type { ControlEnv as Env } from "./env.ts"
import * as Events from "./events.ts"
import type { Modification, NewTask, Rejected, TaskRow } from "./model.ts"
import { optionError } from "./options.ts"

/**
 * The update that replaces pending holder `row` with request `o` at `now`: the request's
 * options that `update` may change (those it leaves out stay), or the update's typed error. A
 * request for another handler is an `InvalidOption` on `handler`: a task's handler is fixed.
 */
export const replacement = (
  env: Env,
  o: TaskOptions,
  row: TaskRow,
  now: number,
): Modification | Rejected<Controls.UpdateError> => {
  const handler = typeof o.handler === "string" ? o.handler : (o.handler as Handler.Any).name
  if (handler !== row.handler) {
    return {
      rejected: optionError(
        "handler",
        handler,
        `a debounced schedule replaces the holder ${Errors.show(row.id)} of its key, whose handler is ${Errors.show(row.handler)}; a task's handler is fixed`,
      ),
    }
  }
  const given = o as unknown as Record<string, unknown>
  const changes: Record<string, unknown> = {}
  for (const k of Controls.updateKeys) if (given[k] !== undefined) changes[k] = given[k]
  const m = Controls.decideUpdate(env, row, changes as Controls.Changes, now)
  if ("rejected" in m) return m
  const change = Declared.changeOf({ update: changes })
  const event = Events.updated(row, now, env.owner, change, m.update.slot ?? row.slot)
  return { ...m, events: [...m.events, event] }
}

/** A batch of accepted tasks, never empty. */
export type Batch = readonly [NewTask, ...Array<NewTask>]

/** This process's schedules that created nothing, by outcome (SPEC §20.3). */
export interface Counted {
  deduplicated: number
  replaced: number
}

/** What a keyed schedule needs of the scheduler beside its {@link Env}. */
export interface KeyedDeps {
  /** Counts the requests that created nothing (`tickwork_schedules_deduplicated_total`). */
  readonly series: Metrics.RunSeries
  /** The same outcomes, counted for `stats().dedup` (this process's, since it started). */
  readonly counted: Counted
  /** Work due within this many ms of now is announced to other processes (their poll). */
  readonly notifyWithinMs: number
  /** Woken once a schedule created or replaced a task: the dispatcher and counts look again. */
  readonly wake: ReadonlyArray<{ readonly wake: () => void }>
}

/**
 * Schedules `tasks` (accepted at `t`, from the options `list`) where any has a deduplication
 * key: one store transaction decides each key by core's rule (`TaskStoreShape.scheduleKeyed`);
 * a debounce replaces the holder with {@link replacement}.
 */
export const schedule = (
  env: Env,
  deps: KeyedDeps,
  list: ReadonlyArray<TaskOptions>,
  tasks: Batch,
  t: number,
) =>
  Effect.suspend(() => {
    let earliest = Number.POSITIVE_INFINITY
    for (const task of tasks) if (task.slot < earliest) earliest = task.slot
    const notify = env.store.signal !== undefined && earliest <= t + deps.notifyWithinMs
    return env.store
      .scheduleKeyed<Controls.UpdateError>(tasks, {
        owner: env.owner,
        notify,
        replace: (k, row) => replacement(env, list[k] as TaskOptions, row, t),
        committed: env.publish,
      })
      .pipe(
        Effect.tap((done) =>
          Effect.sync(() => {
            for (const d of done) {
              if (d.outcome === "created") continue
              deps.series.deduplicated(d.outcome)
              deps.counted[d.outcome]++
            }
            if (done.some((d) => d.outcome !== "deduplicated")) for (const w of deps.wake) w.wake()
          }),
        ),
      )
  })

/**
 * {@link schedule} bound to its dependencies: what the scheduler calls with a batch in which
 * some task has a deduplication key. Its `counted` are this process's outcomes since it was
 * made, for `stats().dedup`.
 */
export const keyed = (env: Env, deps: Omit<KeyedDeps, "counted">) => {
  const counted: Counted = { deduplicated: 0, replaced: 0 }
  const run = (list: ReadonlyArray<unknown>, tasks: Batch, t: number) =>
    schedule(env, { ...deps, counted }, list as ReadonlyArray<TaskOptions>, tasks, t)
  return Object.assign(run, { counted: counted as Readonly<Counted> })
}

export type { Keyed } from "./dedup.ts"
