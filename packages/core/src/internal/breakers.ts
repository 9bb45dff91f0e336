/**
 * @internal
 * The kernel's circuit breakers (SPEC §7): the shared ones by name and the tasks' own, their
 * members, and the earliest half-open time. Pausing and resuming a row is the kernel's, reached
 * through the {@link BreakerHost} it passes in.
 */
import * as Breaker from "../Breaker.ts"
import { InvalidOption } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { PauseReason, TaskId, TaskState } from "../Task.ts"
import type { BreakerInfo } from "./kernelTypes.ts"
import { BreakerCell, type Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { RUNNING, PAUSED, RESUME } = Lifecycle

/** When held row `view` would next run if resumed at `now`: a waiting manual run's due time as it is (SPEC §19.1). */
const resumeAt = (view: Rules.Row, extra: Extras, now: number): number => {
  const k = extra.kept
  return k === undefined
    ? Rules.resume(view, now).dueAt
    : // Stryker disable next-line ObjectLiteral: equivalent, only the row's own dueAt is read
      Rules.resumeManual(view, { slot: k.gridSlot, dueAt: k.dueAt, attempt: k.attempt }, now).dueAt
}

/** @internal The kernel steps a breaker asks for: pause a row, resume a paused row. */
export interface BreakerHost {
  /** PAUSE for row `i` (see `Kernel.pause`); true when it paused or will pause after its run. */
  readonly pause: (i: number, reason: PauseReason, now: number) => boolean
  /** RESUME for paused row `i` at `now`: its resume slot is computed and pushed. */
  readonly resume: (i: number, now: number) => void
}

/** @internal See the module doc. */
export class Breakers<J> {
  /** Shared breakers by name, from the options. */
  readonly named = new Map<string, BreakerCell>()
  /** Every breaker: the shared ones and those of live tasks. */
  readonly cells = new Set<BreakerCell>()
  /** The earliest half-open time of an open breaker, epoch ms; +Infinity when none is open. */
  at = Number.POSITIVE_INFINITY

  private readonly rows: Rows<J>
  private readonly host: BreakerHost

  constructor(rows: Rows<J>, host: BreakerHost) {
    this.rows = rows
    this.host = host
  }

  /** Defines the shared breaker `name` from its resolved policy. */
  define(name: string, policy: Breaker.Resolved): void {
    const cell = new BreakerCell(name, true, policy)
    this.named.set(name, cell)
    this.cells.add(cell)
  }

  /** A shared breaker by name, or a validated policy for a task's own breaker. */
  resolve(option: Breaker.BreakerPolicy | string): BreakerCell | Breaker.Resolved | InvalidOption {
    const found = Breaker.lookup(option, this.named)
    if (found instanceof InvalidOption) return found
    return found._tag === "Shared" ? found.breaker : found.policy
  }

  /** Whether a failed slot of row `i` opens its breaker (the machine's `breakerOpens`). */
  opensOnFailure(i: number): boolean {
    // The kernel asks only for a row with a breaker (see stryker.config.mjs): the guard is never taken.
    // Stryker disable next-line OptionalChaining: equivalent, the row has a side object with a breaker
    const cell = this.rows.t.extra(i)?.breaker
    // Stryker disable next-line BooleanLiteral: equivalent, never reached from the kernel
    if (cell === undefined) return false
    const probe = cell.probe === i && cell.probeGen === this.rows.t.gen(i)
    return Breaker.opensOnFailure(cell.status, cell.policy, probe)
  }

  /** Row `i` joins `choice` (a shared breaker, or a policy for its own) and is held if it is open. */
  join(
    i: number,
    extra: Extras,
    choice: BreakerCell | Breaker.Resolved,
    id: TaskId,
    now: number,
  ): void {
    let cell: BreakerCell
    if (choice instanceof BreakerCell) cell = choice
    else {
      cell = new BreakerCell(id, false, choice)
      this.cells.add(cell)
    }
    cell.members.add(i)
    extra.breaker = cell
    this.step(cell, { _tag: "Joined", task: id }, now, undefined)
  }

  /**
   * Moves every breaker's last opening time and an open one's half-open time by `delta` ms after
   * the wall clock stepped (SPEC §2.6), so a cool-down still ends as long after the opening as it
   * did. O(breakers).
   */
  shift(delta: number): void {
    for (const cell of this.cells) {
      if (cell.openedAt !== undefined) cell.openedAt += delta
      if (cell.halfOpenAt !== Number.POSITIVE_INFINITY) cell.halfOpenAt += delta
    }
    this.updateTimer()
  }

  /** Row `i` leaves its breaker (it is final, or changed breakers). */
  leave(i: number, cell: BreakerCell, now: number): void {
    const id = this.rows.idOf(i)
    // The probe is known by id in the plan: read it while row `i` is still a member.
    const probe = this.probeId(cell)
    cell.members.delete(i)
    const plan = this.step(cell, { _tag: "Left", task: id }, now, undefined, probe)
    if (plan.drop) {
      this.cells.delete(cell)
      if (cell.status.state === "open") this.updateTimer()
    }
  }

  /** Row `i`, its breaker's probe, was paused by hand: another held task probes instead. */
  pausedByHand(i: number, cell: BreakerCell, now: number): void {
    this.step(cell, { _tag: "PausedByHand", task: this.rows.idOf(i) }, now, undefined)
  }

  /** The breaker of row `i` after a run that ended its slot (a run whose retry follows does not). */
  afterRun(i: number, cell: BreakerCell, failed: boolean, now: number): void {
    this.step(cell, { _tag: "SlotEnded", task: this.rows.idOf(i), failed }, now, this.rows.idOf(i))
  }

  /**
   * Open breakers whose cool-down has ended by `at` go half-open and let a probe through. `at`
   * may be ahead of the driver's clock (a stepping driver's takeDue with a later limit): the
   * probe then starts no earlier than `at`.
   */
  halfOpen(at: number): void {
    for (const cell of this.cells) {
      if (cell.status.state !== "open" || cell.halfOpenAt > at) continue
      this.step(cell, { _tag: "CoolDownEnded" }, at, undefined)
      if (cell.probe >= 0) (this.rows.t.extra(cell.probe) as Extras).notBefore = at
    }
    this.updateTimer()
  }

  /** The id of `cell`'s probe, or `undefined`. */
  private probeId(cell: BreakerCell): string | undefined {
    // Stryker disable next-line LogicalOperator: equivalent, the probe's row is always its own generation (see stryker.config.mjs)
    return cell.probe >= 0 && cell.probeGen === this.rows.t.gen(cell.probe)
      ? this.rows.idOf(cell.probe)
      : undefined
  }

  /**
   * Decides `event` on `cell` with the core's {@link Breaker.step} and applies the plan: status,
   * probe, the transition's occurrence (`cause`: the task whose slot moved it), holds, unholds.
   */
  private step(
    cell: BreakerCell,
    event: Breaker.Event,
    now: number,
    cause: TaskId | undefined,
    probe: string | undefined = this.probeId(cell),
  ): Breaker.Plan {
    const input: Breaker.Cell = {
      status: cell.status,
      policy: cell.policy,
      shared: cell.shared,
      probe,
    }
    const byId = new Map<string, number>()
    // Stryker disable next-line ArrayDeclaration: equivalent, a placeholder member has no state, so it is never held, held back or picked
    const members: Array<Breaker.Member> = []
    // Stryker disable next-line StringLiteral: equivalent, a join read through readsMembers gives the same plan
    if (event._tag === "Joined") {
      // Only the joining task is read: a breaker's members are not walked per task scheduled.
      const m = this.rows.lookup(event.task)
      // Stryker disable next-line CallExpression: equivalent, the map only caches what lookup returns
      byId.set(event.task, m)
      members.push(this.member(m, event.task, now))
    } else if (Breaker.readsMembers(input, event)) {
      for (const m of cell.members) {
        const id = this.rows.idOf(m)
        // Stryker disable next-line CallExpression: equivalent, the map only caches what lookup returns
        byId.set(id, m)
        members.push(this.member(m, id, now))
      }
    }
    const plan = Breaker.step(input, event, members, now)
    cell.status = plan.status
    if (plan.probe !== probe) {
      const row =
        // Stryker disable next-line LogicalOperator: equivalent, the probe is in the map, or lookup finds it alike
        plan.probe === undefined ? -1 : (byId.get(plan.probe) ?? this.rows.lookup(plan.probe))
      cell.probe = row
      cell.probeGen = row < 0 ? 0 : this.rows.t.gen(row)
    }
    const t = plan.transition
    if (t !== undefined) {
      if (t.to === "open") {
        cell.openedAt = now
        cell.halfOpenAt = t.halfOpenAt as number
        this.updateTimer()
      } else cell.halfOpenAt = Number.POSITIVE_INFINITY
      this.rows.emit({
        kind: "breaker",
        breaker: cell.name,
        from: t.from,
        to: t.to,
        coolDown: t.coolDown,
        halfOpenAt: t.halfOpenAt,
        probe: t.to === "half-open" ? (plan.probe as TaskId | undefined) : undefined,
        cause,
        at: now,
      })
    }
    // Stryker disable LogicalOperator: equivalent, a held id is always in the map
    for (const id of plan.hold)
      this.host.pause(byId.get(id) ?? this.rows.lookup(id), "breaker", now)
    // Stryker restore LogicalOperator
    // Stryker disable next-line LogicalOperator: equivalent, an unheld id is always in the map
    for (const id of plan.unhold) this.unhold(byId.get(id) ?? this.rows.lookup(id), now)
    return plan
  }

  /** Row `m` as a breaker step reads it. */
  private member(m: number, id: string, now: number): Breaker.Member {
    const extra = this.rows.t.extra(m) as Extras
    const state = Lifecycle.states[this.rows.t.state(m)] as TaskState
    // Stryker disable next-line LogicalOperator: equivalent, resumeAt is read for held members only
    const held = state === "paused" && extra.pausedReason === "breaker"
    return {
      id,
      state,
      pausedReason: extra.pausedReason,
      pauseRequest: extra.pauseRequest,
      rank: this.rows.t.rank(m),
      resumeAt: held ? resumeAt(this.rows.rowView(m, extra), extra, now) : 0,
    }
  }

  /** Unholds row `m`: resumed when held, its breaker's pause request withdrawn while it runs. */
  private unhold(m: number, now: number): void {
    const extra = this.rows.t.extra(m) as Extras
    const s = this.rows.t.state(m)
    // Stryker disable next-line LogicalOperator: equivalent, only a paused row has a pausedReason
    if (s === PAUSED && extra.pausedReason === "breaker") this.host.resume(m, now)
    // Stryker disable next-line LogicalOperator: equivalent, only a running row has a pauseRequest
    else if (s === RUNNING && extra.pauseRequest === "breaker") {
      // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
      this.rows.load(m, extra)
      // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
      Lifecycle.step(RUNNING, RESUME, this.rows.args)
      extra.pauseRequest = undefined
    }
  }

  updateTimer(): void {
    let at = Number.POSITIVE_INFINITY
    for (const cell of this.cells) {
      if (cell.status.state === "open" && cell.halfOpenAt < at) at = cell.halfOpenAt
    }
    this.at = at
  }

  info(cell: BreakerCell): BreakerInfo {
    const tasks: Array<TaskId> = []
    const held: Array<TaskId> = []
    for (const m of cell.members) {
      tasks.push(this.rows.idOf(m))
      // Stryker disable next-line OptionalChaining: equivalent, a breaker's member has a side object
      if (this.rows.t.state(m) === PAUSED && this.rows.t.extra(m)?.pausedReason === "breaker")
        held.push(this.rows.idOf(m))
    }
    const state = cell.status.state
    return {
      name: cell.name,
      shared: cell.shared,
      state,
      failures: cell.status.failures,
      policy: cell.policy,
      opens: cell.status.opens,
      openedAt: cell.openedAt,
      halfOpenAt: state === "open" ? cell.halfOpenAt : undefined,
      probe: cell.probe < 0 ? undefined : this.rows.idOf(cell.probe),
      tasks,
      held,
    }
  }
}
