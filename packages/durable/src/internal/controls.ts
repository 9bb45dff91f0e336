/**
 * @internal
 * Pause and resume (SPEC §5, §15) on stored rows: the store reads the row and writes what the
 * core's rules (`Rules.pause`, `Rules.resume`) decide, in one transaction.
 */
import { Rules } from "@tickwork/core"
import type { Effect } from "effect"
import type { StoreError } from "../Errors.ts"
import type { EventEntry } from "../TaskStore.ts"
import type { Env } from "./env.ts"
import * as Events from "./events.ts"
import * as Rows from "./rows.ts"

/**
 * Pauses a task by hand: a scheduled one at once (it keeps its slot), a running one when its run
 * ends. False for a task already paused (or going to be), final or unknown.
 */
export const pause = (env: Env, id: string): Effect.Effect<boolean, StoreError> => {
  const now = env.now()
  return env.store.modify(id, (row) => {
    const decision = Rules.pause(row.state, row.state === "running" && row.pausedReason !== null)
    if (decision === "ignored") {
      // Paused by its failure policy: a pause by hand outranks it (only resume releases it).
      return undefined
    }
    const event = Events.make("paused", row, now, null, { cause: "manual" })
    return decision === "paused"
      ? { update: Rows.paused(row, "manual", now), events: [event] }
      : { update: Rows.requested(row, "manual", now), events: [] }
  })
}

/**
 * Resumes a paused task (whatever paused it) at the slot the rules give, recording the slots
 * that passed as skipped; or withdraws a pause requested while it runs. False for any other task.
 */
export const resume = (env: Env, id: string): Effect.Effect<boolean, StoreError> => {
  const now = env.now()
  return env.store.modify(id, (row) => {
    if (row.state === "running") {
      return row.pausedReason === null
        ? undefined
        : { update: Rows.requested(row, null, now), events: [] }
    }
    if (row.state !== "paused") return undefined
    const r = Rules.resume(Rows.view(row, env.options.windowMs), now)
    const events: Array<EventEntry> = []
    if (r.skipped !== undefined) events.push(Events.paused(r.skipped, row, now, r.dueAt))
    events.push(
      Events.make("resumed", { ...row, slot: r.slot }, now, null, {
        cause: row.pausedReason,
        detail: `due at ${r.dueAt}`,
      }),
    )
    return { update: Rows.resumed(row, r, now, env.nextSeq()), events }
  })
}
