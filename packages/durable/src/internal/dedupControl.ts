/**
 * @internal
 * A debounced schedule's replacement of its key's pending holder (SPEC §20.3): the durable
 * `update` (SPEC §15) of the holder with the options the request gives, decided by the same
 * `decideUpdate` and recorded by the same `updated` event, so a replacement is an update.
 */
import { Declared, Errors } from "@tickwork/core"
import type * as Handler from "../Handler.ts"
import type { TaskOptions } from "./accept.ts"
import * as Controls from "./controls.ts"
import type { ControlEnv as Env } from "./env.ts"
import * as Events from "./events.ts"
import type { Modification, Rejected, TaskRow } from "./model.ts"
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
