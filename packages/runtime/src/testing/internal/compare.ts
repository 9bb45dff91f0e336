/**
 * @internal
 * After every command, the reference and the scheduler under test must agree: their clocks, run
 * traces, tasks, counts and circuit breakers; then the model's own {@link invariants} (public
 * through `@tickwork/runtime/testing/commands`) and yours must hold.
 */
import type * as Ledger from "../../Ledger.ts"
import * as TestScheduler from "../TestScheduler.ts"
import * as Trace from "../Trace.ts"
import type { Model, System, View } from "./systems.ts"

/** Compares both systems, then the violations and the user's invariant. */
export const compare = async (
  model: Model,
  system: System,
  command: string,
  invariant: ((view: View) => void) | undefined,
): Promise<void> => {
  model.settle()
  await system.run(TestScheduler.settle())
  const violation = system.violations[0]
  if (violation !== undefined) throw new Error(`after ${command}: ${violation}`)
  const expected = model.snapshot()
  const actual = await system.snapshot()
  if (expected.now !== actual.now) {
    throw new Error(
      `after ${command}: the reference is at t=${expected.now}, the scheduler at t=${actual.now}`,
    )
  }
  const traceDiff = Trace.diff(expected.lines, actual.lines)
  if (traceDiff !== undefined) {
    throw new Error(
      `after ${command}, the run traces differ (expected = the reference):\n${traceDiff}`,
    )
  }
  const taskDiff = Trace.diff(expected.tasks, actual.tasks)
  if (taskDiff !== undefined) throw new Error(`after ${command}, the tasks differ:\n${taskDiff}`)
  if (expected.counts !== actual.counts) {
    throw new Error(
      `after ${command}, the counts differ:\n  expected ${expected.counts}\n  actual   ${actual.counts}`,
    )
  }
  const breakerDiff =
    Trace.diff(expected.breakerEvents, actual.breakerEvents) ??
    Trace.diff(expected.breakers, actual.breakers)
  if (breakerDiff !== undefined) {
    throw new Error(`after ${command}, the circuit breakers differ:\n${breakerDiff}`)
  }
  const view = await system.view()
  try {
    invariants(view)
  } catch (error) {
    throw new Error(`after ${command}: ${(error as Error).message}`)
  }
  if (invariant !== undefined) invariant(view)
}

/**
 * The model's own invariants, checked on the scheduler under test after every command (once it
 * has been found equal to the reference):
 *
 * - a paused task starts no run: no run (nor an expiry) of a task is recorded between its
 *   `paused` record and the `resumed` (or `cancelled`) one after it, and every run a task started
 *   is recorded;
 * - a held one-shot is never lost: a paused one-shot still has its run (a held retry, or the
 *   slot `explain` shows it would take), and a one-shot that is final got there through a
 *   record — its run, its expiry or its cancel.
 *
 * Throws an `Error` naming the task and what broke.
 *
 * **Example** (On a view of your own)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.invariants({ now: 0, occurrences: [], lines: [], tasks: [], paused: [] }) // holds
 * ```
 *
 * @category assertions
 * @since 0.2.0
 */
export const invariants = (view: View): void => {
  const paused = new Set<string>()
  const runs = new Map<string, number>()
  const last = new Map<string, Ledger.Occurrence>()
  for (const o of view.occurrences) {
    switch (o.kind) {
      case "paused":
        paused.add(o.id)
        break
      case "resumed":
      case "cancelled":
        paused.delete(o.id)
        break
      case "ran":
      case "retried":
      case "expired":
        if (paused.has(o.id)) {
          throw new Error(`${o.id} is paused, yet it has this record: ${Trace.line(o)}`)
        }
        if (o.kind !== "expired") runs.set(o.id, (runs.get(o.id) ?? 0) + 1)
        break
    }
    if (o.kind !== "skipped" && o.kind !== "coalesced") last.set(`${o.id} ${o.kind}`, o)
  }
  const held = new Map(view.paused.map((e) => [e.id as string, e]))
  for (const t of view.tasks) {
    const recorded = runs.get(t.id) ?? 0
    if (t.state !== "running" && recorded !== t.runNumber) {
      throw new Error(`${t.id} started ${t.runNumber} run(s), ${recorded} recorded`)
    }
    if (t.kind !== "once") continue
    if (t.state === "paused") {
      // It holds its run: a retry (attempt > 1, due at its own time), or its slot, which
      // `explain` lists as the slot it would take if resumed now.
      const e = held.get(t.id)
      if (t.attempt === 1 && (e === undefined || e.slots.length === 0)) {
        throw new Error(`${t.id} is a paused one-shot with no run left: its run was lost`)
      }
    } else if (t.state === "done" || t.state === "failed") {
      const ran = last.get(`${t.id} ran`)
      const ended =
        (ran?.kind === "ran" && ran.state === t.state && ran.continuation === "final") ||
        (t.state === "failed" && last.has(`${t.id} expired`))
      if (!ended) throw new Error(`${t.id} is ${t.state} without a final run or an expiry`)
    } else if (t.state === "cancelled" && !last.has(`${t.id} cancelled`)) {
      throw new Error(`${t.id} is cancelled without a cancel record`)
    }
  }
}
