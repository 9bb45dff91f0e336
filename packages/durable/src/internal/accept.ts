/**
 * @internal
 * Accepting a durable task: its options are validated by the core's rules (`Rules.validate`),
 * its handler must be registered, its payload must encode with the handler's schema, and its
 * schedule must have a stored form (`Schedule.encode`). The result is the row to insert.
 */
import { randomUUID } from "node:crypto"
import { Breaker, Errors, Rules, Schedule, Time } from "@tickwork/core"
import { Result } from "effect"
import {
  type DurableScheduleError,
  NotDurable,
  type StoreError,
  UnknownHandler,
} from "../Errors.ts"
import type * as Handler from "../Handler.ts"
import * as Breakers from "./breakers.ts"
import * as Ids from "./ids.ts"
import type { NewTask } from "./model.ts"
import { optionError } from "./options.ts"
import * as Payload from "./payload.ts"

/** A durable task's options, as given (`DurableTaskOptions`). */
export interface TaskOptions extends Rules.Options {
  readonly handler: Handler.Any | string
  readonly payload: unknown
  readonly id?: string | undefined
  readonly timeout?: Time.DurationInput | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | undefined
  /** Flow control (SPEC §20): a group declared in the layer's `limits.groups`, and a key. */
  readonly group?: string | undefined
  readonly key?: string | undefined
  /** Deduplication (SPEC §20.3). */
  readonly dedup?: Rules.Dedup | undefined
}

/**
 * The keys of a durable task's options: the rules' (but the job; flow control's `group` and
 * `key` included, SPEC §20, and the deduplication key `dedup`, SPEC §20.3), its handler and
 * payload, and the run timeout.
 */
export const taskKeys: ReadonlySet<string> = Rules.keysWith(Rules.optionKeys, {
  without: ["job"],
  with: ["handler", "payload", "timeout"],
})

/**
 * A task's breaker option as stored: a breaker defined on the layer (`breakers`) by name, or a
 * policy of its own (its row is keyed by the task's id); an `InvalidOption` naming `breaker`
 * (or the policy's bad field) otherwise.
 */
export const breakerOf = (
  option: Breaker.BreakerPolicy | string,
  id: string,
  shared: ReadonlyMap<string, Breaker.Resolved>,
): NonNullable<NewTask["breaker"]> | Errors.InvalidOption => {
  const found = Breaker.lookup(option, shared)
  if (found instanceof Errors.InvalidOption) return found
  return found._tag === "Shared"
    ? { key: Breakers.sharedKey(found.name), name: found.name, policy: found.breaker }
    : { key: Breakers.ownKey(id), name: id, policy: found.policy }
}

/** The {@link NotDurable} error for a schedule that has no stored form. */
export const notDurable = (
  schedule: unknown,
  message = "schedule: a custom schedule's next() is a function and cannot be stored, so it cannot survive a restart; use once/at/fixedRate/fixedDelay/cron, or the in-memory Scheduler",
): NotDurable => new NotDurable({ field: "schedule", value: schedule, message })

/**
 * The row for task options `o` accepted at `now` (push order `seq`), or the typed error of the
 * first bad field.
 */
export const prepare = (
  o: TaskOptions,
  now: number,
  handlers: ReadonlyMap<string, Handler.Any>,
  seq: () => number,
  breakers: ReadonlyMap<string, Breaker.Resolved> = new Map(),
  limits: Rules.ResolvedLimits = { groups: new Map(), keys: undefined },
): NewTask | Exclude<DurableScheduleError, StoreError> => {
  if (typeof o !== "object" || o === null) return optionError("options", o, "must be an object")
  const unknown = Errors.unknownKey(o, taskKeys)
  if (unknown !== undefined) return unknown
  const name = typeof o.handler === "string" ? o.handler : (o.handler as Handler.Any)?.name
  const handler = typeof name === "string" ? handlers.get(name) : undefined
  if (handler === undefined) {
    const names = [...handlers.keys()]
    return new UnknownHandler({
      field: "handler",
      value: name ?? o.handler,
      message: `handler ${Errors.show(name ?? o.handler)} is not registered with this scheduler (registered: ${
        names.length === 0 ? "none" : names.map((n) => JSON.stringify(n)).join(", ")
      })`,
    })
  }
  if (o.schedule?._tag === "Custom") return notDurable(o.schedule)
  if (o.id !== undefined) {
    const badId = Ids.check("id", o.id)
    if (badId !== undefined) return badId
  }
  const accepted = Rules.validate(o, now, taskKeys)
  if (!("first" in accepted)) return accepted
  // SPEC §20.1: a group must be declared, a key needs `limits.keys` (core's rule, as the kernel).
  const scopes = Rules.scopesOf(o.group, o.key, limits)
  if (scopes instanceof Errors.InvalidOption) return scopes
  const dedup = o.dedup === undefined ? undefined : Rules.resolveDedup(o.dedup)
  if (dedup instanceof Errors.InvalidOption) return dedup
  const timeoutMs =
    o.timeout === undefined
      ? 0
      : Time.toMillisWith(o.timeout, (reason) => optionError("timeout", o.timeout, reason))
  if (typeof timeoutMs !== "number") return timeoutMs
  const payload = Payload.encode(handler, o.payload)
  if (typeof payload !== "string") return payload
  const encoded = Schedule.encode(o.schedule, accepted)
  if (Result.isFailure(encoded)) return notDurable(o.schedule, encoded.failure.message)
  const id = o.id ?? randomUUID()
  const breaker = o.breaker === undefined ? undefined : breakerOf(o.breaker, id, breakers)
  if (breaker instanceof Errors.InvalidOption) return breaker
  return {
    id,
    tags: accepted.tags,
    windowMs: accepted.windowMs === Rules.NO_WINDOW ? null : accepted.windowMs,
    breaker,
    // Absent options stay undefined properties, not spread in: one object per task, no copies.
    group: o.group,
    key: o.key,
    handler: handler.name,
    payload,
    seq: seq(),
    schedule: encoded.success,
    priority: accepted.rank,
    retry: accepted.retry,
    missedRuns: accepted.missedRuns,
    pauseAfter: accepted.pauseAfter,
    timeoutMs,
    slot: accepted.first,
    now,
    dedup,
  }
}
