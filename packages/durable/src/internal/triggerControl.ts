/**
 * @internal
 * The trigger control of a process (SPEC §19.1), apart from the store's statement
 * (`trigger.ts`, which `TaskStore` assembles): this module reads the process's environment, the
 * statement's module does not, so the store does not import the environment that imports it.
 */
import { type Errors, Rules } from "@tickwork/core"
import { Effect } from "effect"
import type { StoreError } from "../Errors.ts"
import type { ControlEnv } from "./env.ts"

/**
 * The trigger control of a process (SPEC §19.1): the row triggered through `env.store`, its
 * event published; a refusal is core's `ManualRunRefused` naming the id and the state it found.
 */
export const triggerTask = (
  env: ControlEnv,
  id: string,
  origin?: string | undefined,
): Effect.Effect<void, Errors.ManualRunRefused | StoreError> =>
  Effect.flatMap(env.store.trigger(id, env.now(), env.nextSeq(), origin), (r) => {
    if (r._tag === "Refused") {
      return Effect.fail(
        Rules.manualRefusal("trigger", id, r.state, r.pending) as Errors.ManualRunRefused,
      )
    }
    return Effect.sync(() => env.publish(r.event))
  })
