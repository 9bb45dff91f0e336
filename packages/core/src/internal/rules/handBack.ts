/**
 * @internal
 * The two steps only a durable store takes (SPEC §5.5): a claimed run handed back with no
 * outcome, and a claimed run whose stored task cannot be read.
 */
import * as Lifecycle from "../../Lifecycle.ts"
import type { PauseReason, TaskState } from "../../Task.ts"

/**
 * A hand-back's row change (see {@link handBack}): the state the task is in now, and the reason
 * it is paused (`undefined` unless `state` is `"paused"`). A pause request it had is used up.
 *
 * @category models
 * @since 0.6.0
 */
export interface HandedBack {
  readonly state: TaskState
  readonly pausedReason: PauseReason | undefined
}

/**
 * The HAND_BACK step (SPEC §5.5): a `running` task's claimed run returned with no outcome (a
 * closing scheduler, a lost session, recovery after a crash). The run did not happen: its pending
 * slot or retry stays as it was, and the task is `scheduled` again, or `paused` (held, the pending
 * run kept) when a pause was requested while it was claimed (`pauseRequest`). Pure.
 *
 * @category combinators
 * @since 0.6.0
 */
export const handBack = (pauseRequest: PauseReason | undefined): HandedBack => {
  const context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 1,
    consecutiveFailures: 0,
    pauseAfter: 0,
    pauseRequested: pauseRequest !== undefined,
  }
  const edge = Lifecycle.step(Lifecycle.RUNNING, Lifecycle.HAND_BACK, {
    context,
    event: HAND_BACK_EVENT,
  }) as Lifecycle.Edge
  const state = Lifecycle.states[edge.target] as TaskState
  return { state, pausedReason: state === "paused" ? pauseRequest : undefined }
}

const HAND_BACK_EVENT: Lifecycle.TaskEvent = { type: "HAND_BACK" }

/**
 * The UNREADABLE step (SPEC §5.5): the state a `running` task ends in when its stored row cannot
 * be read back into the rules' terms (edited by hand, say). Pure.
 *
 * @category combinators
 * @since 0.6.0
 */
export const unreadable = (): TaskState => {
  // Stryker disable next-line ObjectLiteral: equivalent, the machine's UNREADABLE step reads no context
  const context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 1,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  const edge = Lifecycle.step(Lifecycle.RUNNING, Lifecycle.UNREADABLE, {
    context,
    event: UNREADABLE_EVENT,
  }) as Lifecycle.Edge
  return Lifecycle.states[edge.target] as TaskState
}

const UNREADABLE_EVENT: Lifecycle.TaskEvent = { type: "UNREADABLE" }
