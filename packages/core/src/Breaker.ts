/**
 * Circuit breakers (SPEC §7): a guard shared by one task or by several, that stops their runs
 * while a dependency is failing.
 *
 * ```text
 *            n failed slots in a row              cool-down ends
 *  closed ───────────────────────────▶ open ─────────────────────▶ half-open
 *    ▲                                  ▲                              │
 *    │ the probe's slot succeeds        │ the probe's slot fails       │ one held task is
 *    └──────────────────────────────────┴──────────────────────────────┘ let through (the probe)
 * ```
 *
 * A slot counts when it ends: a success, or a failure with its retries used up. While the
 * breaker is open its tasks are held (`paused`, reason `breaker`): held one-shots and retries
 * wait, recurring slots that pass are recorded as skipped. After the cool-down exactly one held
 * task is let through as the probe; its slot's success closes the breaker and releases every task
 * it holds, its failure opens it again with the cool-down grown by `factor` (capped by
 * `maxCoolDown`). Outcomes of runs that were already running when it opened do not move it.
 *
 * This module holds the policy and the pure decisions; the kernel keeps each breaker's state and
 * applies them.
 *
 * @since 0.2.0
 */
import { InvalidOption, show, unknownKey } from "./Errors.ts"
import type { BreakerState } from "./Task.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "./Time.ts"

export type { BreakerState } from "./Task.ts"

/**
 * A circuit breaker, as a user writes it: per task (`breaker: { … }`), or named once on the
 * kernel or driver (`breakers: { smtp: { … } }`) and shared (`breaker: "smtp"`).
 *
 * **Example** (Open after 3 failed slots; retry after 30 s, then 60 s, … up to 10 minutes)
 *
 * ```ts
 * import type { Breaker } from "@tickwork/core"
 * const smtp: Breaker.BreakerPolicy = {
 *   failures: 3,
 *   coolDown: "30 seconds",
 *   factor: 2,
 *   maxCoolDown: "10 minutes",
 * }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface BreakerPolicy {
  /** Failed slots in a row (retries used up) that open it: a positive integer. */
  readonly failures: number
  /** How long it stays open before it lets a probe through. */
  readonly coolDown: DurationInput
  /** Growth of the cool-down each time a probe fails, a finite number >= 1. Default 1. */
  readonly factor?: number
  /** Upper bound of the cool-down. Default: none. */
  readonly maxCoolDown?: DurationInput
}

/**
 * A validated breaker policy.
 *
 * @category models
 * @since 0.2.0
 */
export interface Resolved {
  readonly failures: number
  /** ms */
  readonly coolDown: number
  readonly factor: number
  /** ms */
  readonly maxCoolDown: number
}

const policyKeys: ReadonlySet<string> = new Set(["failures", "coolDown", "factor", "maxCoolDown"])

const bad = (field: string, value: unknown, rule: string) =>
  new InvalidOption({ field, value, message: `${field} ${rule}, got ${show(value)}` })

/**
 * Validates a breaker policy, filling in defaults; the error names the first bad field under
 * `field` (`"breaker"` for a task's, `"breakers.smtp"` for a shared one).
 *
 * @category constructors
 * @since 0.2.0
 */
export const resolve = (policy: BreakerPolicy, field = "breaker"): Resolved | InvalidOption => {
  if (typeof policy !== "object" || policy === null)
    return bad(field, policy, "must be a breaker policy object or a breaker's name")
  const unknown = unknownKey(policy, policyKeys, `${field}.`)
  if (unknown !== undefined) return unknown
  const failures = policy.failures
  if (!Number.isSafeInteger(failures) || failures < 1)
    return bad(`${field}.failures`, failures, "must be a positive integer")
  const ms = (name: string, input: DurationInput) =>
    toMillisWith(input, (reason) => bad(`${field}.${name}`, input, reason))
  const coolDown = ms("coolDown", policy.coolDown)
  if (typeof coolDown !== "number") return coolDown
  const factor = policy.factor ?? 1
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1)
    return bad(`${field}.factor`, factor, "must be a finite number >= 1")
  const maxCoolDown =
    policy.maxCoolDown === undefined ? MAX_MS : ms("maxCoolDown", policy.maxCoolDown)
  if (typeof maxCoolDown !== "number") return maxCoolDown
  return { failures, coolDown, factor, maxCoolDown }
}

/**
 * What a breaker's decisions read: its state, the failed slots in a row while closed, and how
 * many times it has opened since it last closed.
 *
 * @category models
 * @since 0.2.0
 */
export interface Status {
  readonly state: BreakerState
  readonly failures: number
  readonly opens: number
}

/**
 * The cool-down of the `opens`-th opening since the breaker last closed (1-based):
 * `min(maxCoolDown, coolDown * factor^(opens-1))`, whole ms. Pure.
 *
 * @category combinators
 * @since 0.2.0
 */
export const coolDownOf = (policy: Resolved, opens: number): number =>
  Math.floor(Math.min(policy.maxCoolDown, policy.coolDown * policy.factor ** (opens - 1), MAX_MS))

/**
 * Whether a failed slot of one of its tasks opens the breaker: the `failures`-th in a row while
 * closed, or the probe's while half-open. Pure.
 *
 * @category combinators
 * @since 0.2.0
 */
export const opensOnFailure = (status: Status, policy: Resolved, probe: boolean): boolean =>
  status.state === "closed"
    ? status.failures + 1 >= policy.failures
    : status.state === "half-open" && probe

/**
 * The breaker after one of its tasks' slots ended (`failed`: retries used up). `probe` says the
 * slot was the half-open breaker's probe. Only a closed breaker counts slots; an open one ignores
 * them (its tasks' runs started before it opened); a half-open one listens to its probe only. Pure.
 *
 * **Example** (Two failed slots open a breaker of `failures: 2`)
 *
 * ```ts
 * import { Breaker } from "@tickwork/core"
 * const policy = Breaker.resolve({ failures: 2, coolDown: 1000 }) as Breaker.Resolved
 * const s1 = Breaker.afterSlot({ state: "closed", failures: 0, opens: 0 }, policy, false, true)
 * const s2 = Breaker.afterSlot(s1, policy, false, true)
 * s2.state // "open"
 * ```
 *
 * @category combinators
 * @since 0.2.0
 */
export const afterSlot = (
  status: Status,
  policy: Resolved,
  probe: boolean,
  failed: boolean,
): Status => {
  switch (status.state) {
    case "closed":
      if (!failed) return status.failures === 0 ? status : { ...status, failures: 0 }
      return opensOnFailure(status, policy, false)
        ? { state: "open", failures: status.failures + 1, opens: 1 }
        : { ...status, failures: status.failures + 1 }
    case "open":
      return status
    case "half-open":
      if (!probe) return status
      return failed
        ? { state: "open", failures: status.failures, opens: status.opens + 1 }
        : { state: "closed", failures: 0, opens: 0 }
  }
}

/**
 * An opening of the breaker at `now` (its `opens`-th since it last closed): its cool-down
 * ({@link coolDownOf}) and when it goes half-open, epoch ms, capped at the end of time. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const opening = (
  policy: Resolved,
  opens: number,
  now: number,
): { readonly coolDown: number; readonly halfOpenAt: number } => {
  const coolDown = coolDownOf(policy, opens)
  return { coolDown, halfOpenAt: Math.min(now + coolDown, MAX_MS) }
}

/**
 * What happens to a task that joins a breaker in `state` (it is scheduled, or names the breaker
 * in an update): nothing while it is closed; while half-open with no probe, a `scheduled` task
 * becomes the probe; otherwise it is held (`paused`, reason `breaker`). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const onJoin = (
  state: BreakerState,
  hasProbe: boolean,
  scheduled: boolean,
): "none" | "probe" | "hold" =>
  state === "closed" ? "none" : state === "half-open" && !hasProbe && scheduled ? "probe" : "hold"

/**
 * Whether held task `a` goes before `b` as a half-open breaker's probe: the one that would run
 * first — the earlier due time if resumed now, then the higher priority (lower rank). Ties keep
 * the caller's order (the kernel's table order, a store's id order). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const probeBefore = (
  a: { readonly dueAt: number; readonly rank: number },
  b: { readonly dueAt: number; readonly rank: number },
): boolean => a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.rank < b.rank)

/**
 * Whether a task its breaker holds is released when it leaves that breaker (an update naming
 * another breaker, or none) for one in `joined` (`undefined`: none): only an open or half-open
 * breaker keeps holding it. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const releasedOnLeave = (joined: BreakerState | undefined): boolean =>
  joined === undefined || joined === "closed"
