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
 * task is let through as the probe; its slot's success closes the breaker and unholds every task
 * it holds, its failure opens it again with the cool-down grown by `factor` (capped by
 * `maxCoolDown`). Outcomes of runs that were already running when it opened do not move it.
 *
 * This module holds the policy and the pure decisions, down to the whole step ({@link step}: a
 * breaker, an event and its members → its new status, the tasks to hold and unhold, the probe);
 * the kernel and the durable store keep each breaker's state and apply the plan.
 *
 * @since 0.2.0
 */
import { InvalidOption, show, unknownKey } from "./Errors.ts"
import type { BreakerState, PauseReason, TaskState } from "./Task.ts"
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
  // Number.isFinite is false for anything but a finite number (it does not coerce "2").
  if (!Number.isFinite(factor) || factor < 1)
    return bad(`${field}.factor`, factor, "must be a finite number >= 1")
  const maxCoolDown =
    policy.maxCoolDown === undefined ? MAX_MS : ms("maxCoolDown", policy.maxCoolDown)
  if (typeof maxCoolDown !== "number") return maxCoolDown
  return { failures, coolDown, factor, maxCoolDown }
}

/**
 * A task's `breaker` option looked up: the shared breaker it names (its entry in `shared`), or a
 * policy of its own, resolved; an `InvalidOption` naming `breaker` (or the policy's bad field)
 * when the name is not defined or the policy is bad. Every store looks names up here, so the
 * error is the same everywhere. Pure.
 *
 * @category constructors
 * @since 0.3.0
 */
export const lookup = <T>(
  option: BreakerPolicy | string,
  shared: ReadonlyMap<string, T>,
):
  | { readonly _tag: "Shared"; readonly name: string; readonly breaker: T }
  | { readonly _tag: "Own"; readonly policy: Resolved }
  | InvalidOption => {
  if (typeof option === "string") {
    const breaker = shared.get(option)
    return breaker === undefined
      ? new InvalidOption({
          field: "breaker",
          value: option,
          message: `breaker ${show(option)} is not defined (defined: ${[...shared.keys()].join(", ") || "none"})`,
        })
      : { _tag: "Shared", name: option, breaker }
  }
  const policy = resolve(option)
  return "failures" in policy ? { _tag: "Own", policy } : policy
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
 * first — the earlier due time if resumed now, then the higher priority (lower rank), then the
 * smaller id (code-unit order). A total order, so every store picks the same probe whatever order
 * it reads its tasks in. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const probeBefore = (
  a: { readonly dueAt: number; readonly rank: number; readonly id: string },
  b: { readonly dueAt: number; readonly rank: number; readonly id: string },
): boolean =>
  a.dueAt < b.dueAt ||
  (a.dueAt === b.dueAt && (a.rank < b.rank || (a.rank === b.rank && a.id < b.id)))

/**
 * Whether a task its breaker holds is unheld when it leaves that breaker (an update naming
 * another breaker, or none) for one in `joined` (`undefined`: none): only an open or half-open
 * breaker keeps holding it. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const unheldOnLeave = (joined: BreakerState | undefined): boolean =>
  joined === undefined || joined === "closed"

// ---------------------------------------------------------------------------- whole steps

/**
 * One live task of a breaker, as {@link step} reads it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Member {
  readonly id: string
  readonly state: TaskState
  /** Why it is `paused`; `undefined` in any other state. */
  readonly pausedReason: PauseReason | undefined
  /** A pause asked for while it runs; `undefined` otherwise. */
  readonly pauseRequest: PauseReason | undefined
  /** Priority rank: 0 high, 1 normal, 2 low. */
  readonly rank: number
  /**
   * When it would be due if resumed now (`Rules.resume`'s `dueAt`), epoch ms. Read only for a
   * held task (`paused`, reason `breaker`), as a probe candidate; any number otherwise.
   */
  readonly resumeAt: number
}

/**
 * A breaker as {@link step} reads it: its status, policy, whether it is shared, and its probe.
 *
 * @category models
 * @since 0.3.0
 */
export interface Cell {
  readonly status: Status
  readonly policy: Resolved
  /** Defined once and named by tasks; a task's own breaker is not shared. */
  readonly shared: boolean
  /** The half-open breaker's probe's id, or `undefined`. */
  readonly probe: string | undefined
}

/**
 * What moves a breaker: a task's slot ended (`failed`: retries used up); the cool-down ended; a
 * task joined (it is in the members); a task left (it is no longer in the members); a task was
 * paused by hand (it stays a member, but cannot be the probe).
 *
 * @category models
 * @since 0.3.0
 */
export type Event =
  | { readonly _tag: "SlotEnded"; readonly task: string; readonly failed: boolean }
  | { readonly _tag: "CoolDownEnded" }
  | { readonly _tag: "Joined"; readonly task: string }
  | { readonly _tag: "Left"; readonly task: string }
  | { readonly _tag: "PausedByHand"; readonly task: string }

/**
 * A breaker's whole step, for its store to apply in order: write the status and probe, report the
 * transition, hold the `hold` tasks, unhold the `unhold` ones (the new probe among them).
 *
 * @category models
 * @since 0.3.0
 */
export interface Plan {
  readonly status: Status
  /** The probe after the step (`undefined`: none). */
  readonly probe: string | undefined
  /** The state change to report, if the state changed. */
  readonly transition:
    | {
        readonly from: BreakerState
        readonly to: BreakerState
        /** An opening's cool-down, ms. */
        readonly coolDown: number | undefined
        /** An opening's half-open time, epoch ms. */
        readonly halfOpenAt: number | undefined
      }
    | undefined
  /** Members to hold (reason `breaker`): a scheduled one is paused, a running one asked to. */
  readonly hold: ReadonlyArray<string>
  /**
   * Members to unhold: a held one resumes at its resume slot, a running one's pause request by
   * the breaker is withdrawn. The new probe, when one is picked, is the only one after a
   * cool-down or a probe's replacement.
   */
  readonly unhold: ReadonlyArray<string>
  /** A task's own breaker whose task left: its store drops it. */
  readonly drop: boolean
}

const NONE: ReadonlyArray<string> = []

const isHeld = (m: Member): boolean => m.state === "paused" && m.pausedReason === "breaker"

/**
 * The held member that goes first as a probe ({@link probeBefore}), or `undefined` when none is
 * held. O(members).
 *
 * @category combinators
 * @since 0.3.0
 */
export const pickProbe = (members: ReadonlyArray<Member>): Member | undefined => {
  let best: Member | undefined
  for (const m of members) {
    if (!isHeld(m)) continue
    if (
      best === undefined ||
      probeBefore({ ...m, dueAt: m.resumeAt }, { ...best, dueAt: best.resumeAt })
    )
      best = m
  }
  return best
}

/**
 * Whether {@link step} reads the members for `event` on `cell`: when the state changes (a slot
 * opens or closes it, the cool-down ends) or the probe is replaced. A `Joined` step reads only
 * the joining task's member. Otherwise a store may pass no members and skip reading them. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const readsMembers = (cell: Cell, event: Event): boolean => {
  switch (event._tag) {
    case "SlotEnded":
      return (
        afterSlot(cell.status, cell.policy, cell.probe === event.task, event.failed).state !==
        cell.status.state
      )
    case "CoolDownEnded":
      return cell.status.state === "open"
    case "Joined":
      return true
    case "Left":
    case "PausedByHand":
      return (
        cell.probe === event.task &&
        cell.status.state === "half-open" &&
        !(event._tag === "Left" && !cell.shared)
      )
  }
}

/**
 * A breaker's whole step at `now` (SPEC §7): `event` on `cell` with its live `members` → its new
 * status, the tasks to hold and to unhold, and the probe. Pure: every store applies the plan.
 *
 * - a slot ended: {@link afterSlot}; an opening holds every other member that runs or is
 *   scheduled, a closing unholds every held member (and withdraws the breaker's pause requests);
 * - the cool-down ended: the open breaker goes half-open and its first held task
 *   ({@link pickProbe}) is unheld as the probe (none held: the next task to come is);
 * - a task joined: {@link onJoin} — nothing, it is the probe, or it is held;
 * - the probe left, or was paused by hand: a half-open breaker picks another held task as its
 *   probe; a task's own breaker is dropped when its task leaves.
 *
 * **Example** (The cool-down ends: the held task due first probes)
 *
 * ```ts
 * import { Breaker } from "@tickwork/core"
 * const policy = Breaker.resolve({ failures: 1, coolDown: 10 }) as Breaker.Resolved
 * const held = { state: "paused", pausedReason: "breaker", pauseRequest: undefined, rank: 1 } as const
 * const plan = Breaker.step(
 *   { status: { state: "open", failures: 1, opens: 1 }, policy, shared: true, probe: undefined },
 *   { _tag: "CoolDownEnded" },
 *   [{ ...held, id: "b", resumeAt: 20 }, { ...held, id: "a", resumeAt: 20 }],
 *   20,
 * )
 * plan.probe // "a": same due time and priority, the smaller id
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const step = (
  cell: Cell,
  event: Event,
  members: ReadonlyArray<Member>,
  now: number,
): Plan => {
  const unchanged: Plan = {
    status: cell.status,
    probe: cell.probe,
    transition: undefined,
    hold: NONE,
    unhold: NONE,
    drop: false,
  }
  switch (event._tag) {
    case "SlotEnded": {
      const before = cell.status
      const after = afterSlot(before, cell.policy, cell.probe === event.task, event.failed)
      if (after.state === before.state) return { ...unchanged, status: after }
      if (after.state === "open") {
        const { coolDown, halfOpenAt } = opening(cell.policy, after.opens, now)
        const hold = members
          .filter(
            (m) =>
              m.id !== event.task &&
              (m.state === "scheduled" || (m.state === "running" && m.pauseRequest === undefined)),
          )
          .map((m) => m.id)
        return {
          ...unchanged,
          status: after,
          probe: undefined,
          transition: { from: before.state, to: "open", coolDown, halfOpenAt },
          hold,
        }
      }
      const unhold = members
        .filter(
          (m) =>
            m.id !== event.task &&
            (isHeld(m) || (m.state === "running" && m.pauseRequest === "breaker")),
        )
        .map((m) => m.id)
      return {
        ...unchanged,
        status: after,
        probe: undefined,
        transition: {
          from: before.state,
          to: after.state,
          coolDown: undefined,
          halfOpenAt: undefined,
        },
        unhold,
      }
    }
    case "CoolDownEnded": {
      if (cell.status.state !== "open") return unchanged
      const probe = pickProbe(members)
      return {
        ...unchanged,
        status: { ...cell.status, state: "half-open" },
        probe: probe?.id,
        transition: { from: "open", to: "half-open", coolDown: undefined, halfOpenAt: undefined },
        unhold: probe === undefined ? NONE : [probe.id],
      }
    }
    case "Joined": {
      const task = members.find((m) => m.id === event.task)
      if (task === undefined) return unchanged
      const join = onJoin(cell.status.state, cell.probe !== undefined, task.state === "scheduled")
      if (join === "none") return unchanged
      if (join === "probe") return { ...unchanged, probe: task.id }
      const holds =
        task.state === "scheduled" || (task.state === "running" && task.pauseRequest === undefined)
      return holds ? { ...unchanged, hold: [task.id] } : unchanged
    }
    case "Left":
    case "PausedByHand": {
      const drop = event._tag === "Left" && !cell.shared
      if (cell.probe !== event.task) return { ...unchanged, drop }
      if (drop || cell.status.state !== "half-open") return { ...unchanged, probe: undefined, drop }
      const probe = pickProbe(members.filter((m) => m.id !== event.task))
      return {
        ...unchanged,
        probe: probe?.id,
        unhold: probe === undefined ? NONE : [probe.id],
      }
    }
  }
}
