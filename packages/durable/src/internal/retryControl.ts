/**
 * @internal
 * The retry control of a process (SPEC §19.2), apart from the store's statement
 * (`retry.ts`, which `TaskStore` assembles): this module reads the process's environment, the
 * statement's module does not, so the store does not import the environment that imports it.
 */
import { type Errors, Rules, Time } from "@tickwork/core"
import { type DateTime, Effect } from "effect"
import type { StoreError } from "../Errors.ts"
import type { ControlEnv } from "./env.ts"

/**
 * The retry control of a process (SPEC §19.2): the row retried through `env.store`, its event
 * published; a refusal is core's `ManualRunRefused` naming the id and the state it found.
 */
export const retryTask = (
  env: ControlEnv,
  id: string,
  origin?: string | undefined,
): Effect.Effect<void, Errors.ManualRunRefused | StoreError> =>
  Effect.flatMap(env.store.retry(id, env.now(), env.nextSeq(), origin), (r) => {
    if (r._tag === "Refused") {
      return Effect.fail(Rules.manualRefusal("retry", id, r.state) as Errors.ManualRunRefused)
    }
    return Effect.sync(() => env.publish(r.event))
  })

/**
 * The retry of one slot (SPEC §19.7; `slot` checked by the caller: epoch ms): the row changed
 * through `env.store`, its event published; a refusal is core's, as the store's transaction
 * decided it.
 */
export const retrySlot = (
  env: ControlEnv,
  id: string,
  slot: number,
  origin?: string | undefined,
): Effect.Effect<void, Errors.ManualRunRefused | StoreError> =>
  Effect.flatMap(env.store.retrySlot(id, slot, env.now(), env.nextSeq(), origin), (r) => {
    if (r._tag === "Refused") {
      const refusal =
        r.refusal ??
        Rules.manualRefusal("retry", id, r.state, false, {
          slot,
          recurring: true,
          pendingSlot: undefined,
          runs: undefined,
        })
      return Effect.fail(refusal as Errors.ManualRunRefused)
    }
    return Effect.sync(() => env.publish(r.event))
  })

/**
 * `retry(id, { slot })` of a scheduler or an operator: without a slot, {@link retryTask};
 * with one, checked first (a `slot` that is not a safe integer of epoch ms is `InvalidTime`
 * naming it, and nothing is read), then {@link retrySlot}.
 */
export const retryAsked = (
  env: ControlEnv,
  id: string,
  slot: number | Date | DateTime.DateTime | undefined,
  origin?: string | undefined,
): Effect.Effect<void, Errors.ManualRunRefused | Errors.InvalidTime | StoreError> => {
  if (slot === undefined) return retryTask(env, id, origin)
  const at = Time.toInstant(slot, "slot")
  return typeof at === "number" ? retrySlot(env, id, at, origin) : Effect.fail(at)
}
