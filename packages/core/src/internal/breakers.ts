/**
 * @internal
 * The kernel's circuit breakers (SPEC §7): the shared ones by name and the tasks' own, their
 * members, and the earliest half-open time. Pausing and resuming a row is the kernel's, reached
 * through the {@link BreakerHost} it passes in.
 */
import * as Breaker from "../Breaker.ts"
import { InvalidOption, show } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { BreakerState, PauseReason, TaskId } from "../Task.ts"
import type { BreakerInfo } from "./kernelTypes.ts"
import { BreakerCell, type Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, RUNNING, PAUSED, RESUME } = Lifecycle

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
    if (typeof option === "string") {
      const cell = this.named.get(option)
      return (
        cell ??
        new InvalidOption({
          field: "breaker",
          value: option,
          message: `breaker ${show(option)} is not defined (defined: ${[...this.named.keys()].join(", ") || "none"})`,
        })
      )
    }
    return Breaker.resolve(option)
  }

  /** Whether a failed slot of row `i` opens its breaker (the machine's `breakerOpens`). */
  opensOnFailure(i: number): boolean {
    const cell = this.rows.t.extra(i)?.breaker
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
    const join = Breaker.onJoin(
      cell.status.state,
      cell.probe >= 0,
      this.rows.t.state(i) === SCHEDULED,
    )
    if (join === "none") return
    if (join === "probe") {
      // A half-open breaker with nothing held to probe: the first task to come is the probe.
      cell.probe = i
      cell.probeGen = this.rows.t.gen(i)
      return
    }
    this.host.pause(i, "breaker", now)
  }

  /** Row `i` leaves its breaker (it is final, or changed breakers). */
  leave(i: number, cell: BreakerCell, now: number): void {
    cell.members.delete(i)
    const probe = cell.probe === i && cell.probeGen === this.rows.t.gen(i)
    if (probe) cell.probe = -1
    if (!cell.shared) {
      this.cells.delete(cell)
      if (cell.status.state === "open") this.updateTimer()
      return
    }
    if (probe && cell.status.state === "half-open") this.pickProbe(cell, now, undefined)
  }

  /** The breaker of row `i` after a run that ended its slot (a run whose retry follows does not). */
  afterRun(i: number, cell: BreakerCell, failed: boolean, now: number): void {
    const probe = cell.probe === i && cell.probeGen === this.rows.t.gen(i)
    const before = cell.status
    const after = Breaker.afterSlot(before, cell.policy, probe, failed)
    cell.status = after
    if (after.state === before.state) return
    cell.probe = -1
    const cause = this.rows.idOf(i)
    if (after.state === "open") {
      const { coolDown, halfOpenAt } = Breaker.opening(cell.policy, after.opens, now)
      cell.openedAt = now
      cell.halfOpenAt = halfOpenAt
      this.updateTimer()
      this.rows.emit({
        kind: "breaker",
        breaker: cell.name,
        from: before.state,
        to: "open",
        coolDown,
        halfOpenAt: cell.halfOpenAt,
        probe: undefined,
        cause,
        at: now,
      })
      for (const m of cell.members) if (m !== i) this.host.pause(m, "breaker", now)
    } else {
      this.rows.emit({
        kind: "breaker",
        breaker: cell.name,
        from: before.state,
        to: after.state,
        coolDown: undefined,
        halfOpenAt: undefined,
        probe: undefined,
        cause,
        at: now,
      })
      this.unholdMembers(cell, now, i)
    }
  }

  /** Every task its breaker holds is unheld (resumed); pause requests by the breaker are withdrawn. */
  unholdMembers(cell: BreakerCell, now: number, except: number): void {
    for (const m of [...cell.members]) {
      if (m === except) continue
      const extra = this.rows.t.extra(m) as Extras
      const s = this.rows.t.state(m)
      if (s === PAUSED && extra.pausedReason === "breaker") this.host.resume(m, now)
      else if (s === RUNNING && extra.pauseRequest === "breaker") {
        this.rows.load(m, extra)
        Lifecycle.step(RUNNING, RESUME, this.rows.args)
        extra.pauseRequest = undefined
      }
    }
  }

  /**
   * Open breakers whose cool-down has ended by `at` go half-open and let a probe through. `at`
   * may be ahead of the driver's clock (a stepping driver's takeDue with a later limit): the
   * probe then starts no earlier than `at`.
   */
  halfOpen(at: number): void {
    for (const cell of this.cells) {
      if (cell.status.state !== "open" || cell.halfOpenAt > at) continue
      cell.status = { ...cell.status, state: "half-open" }
      cell.halfOpenAt = Number.POSITIVE_INFINITY
      this.pickProbe(cell, at, "open")
      if (cell.probe >= 0) (this.rows.t.extra(cell.probe) as Extras).notBefore = at
    }
    this.updateTimer()
  }

  /**
   * Lets the held task that would run first (earliest resume slot, then priority, then row) through
   * as the half-open breaker's probe; reports the transition `from` → half-open when given.
   */
  pickProbe(cell: BreakerCell, now: number, from: BreakerState | undefined): void {
    let best = -1
    let bestSlot = 0
    for (const m of cell.members) {
      const extra = this.rows.t.extra(m) as Extras
      if (this.rows.t.state(m) !== PAUSED || extra.pausedReason !== "breaker") continue
      const slot = Rules.resume(this.rows.rowView(m, extra), now).dueAt
      if (
        best < 0 ||
        Breaker.probeBefore(
          { dueAt: slot, rank: this.rows.t.rank(m) },
          { dueAt: bestSlot, rank: this.rows.t.rank(best) },
        )
      ) {
        best = m
        bestSlot = slot
      }
    }
    if (from !== undefined) {
      this.rows.emit({
        kind: "breaker",
        breaker: cell.name,
        from,
        to: "half-open",
        coolDown: undefined,
        halfOpenAt: undefined,
        probe: best < 0 ? undefined : this.rows.idOf(best),
        cause: undefined,
        at: now,
      })
    }
    if (best < 0) return
    cell.probe = best
    cell.probeGen = this.rows.t.gen(best)
    this.host.resume(best, now)
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
