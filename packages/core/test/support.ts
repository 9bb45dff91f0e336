/**
 * Small helpers shared by the core's tests: a driver on a manual clock, Result unwrapping and a
 * compact rendering of run records for comparing traces.
 */
import { Result } from "effect"
import { Clock, Driver, Errors, type Task } from "../src/index.ts"

/** A driver on a {@link Clock.ManualClock} starting at `start`. */
export const setup = (start = 0, options: Omit<Driver.DriverOptions, "clock"> = {}) => {
  const clock = new Clock.ManualClock(start)
  const driver = Driver.make({ ...options, clock })
  return { clock, driver }
}

/** A job that does nothing. */
export const noop: Driver.Job = () => {}

/** A job that always throws `error`. */
export const failing =
  (error: unknown = new Error("boom")): Driver.Job =>
  () => {
    throw error
  }

/** The success of a Result, or a test failure naming the error. */
export const ok = <A, E>(r: Result.Result<A, E>): A => {
  if (Result.isFailure(r)) throw new Error(`expected a success, got ${String(r.failure)}`)
  return r.success
}

/** The failure of a Result, or a test failure naming the value. */
export const err = <A, E>(r: Result.Result<A, E>): E => {
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got ${String(r.success)}`)
  return r.failure
}

/** `id@scheduledFor` for each record: the run order and slots, compactly. */
export const slots = (records: ReadonlyArray<Task.RunRecord>): Array<string> =>
  records.map((r) => `${r.id}@${r.scheduledFor}`)

/** One line per record with everything a trace comparison needs. */
export const lines = (records: ReadonlyArray<Task.RunRecord>): Array<string> =>
  records.map(
    (r) =>
      `${r.id}#${r.generation} slot=${r.scheduledFor} start=${r.startedAt} end=${r.finishedAt} ` +
      `attempt=${r.attempt} run=${r.runNumber} ${r.outcome.kind} -> ${r.state}/${r.continuation}` +
      (r.nextSlot === undefined ? "" : ` next=${r.nextSlot}`),
  )

/** A snapshot of everything observable about a driver without running anything. */
export const observe = (driver: Driver.Driver) => ({
  stats: driver.stats(),
  ids: driver.taskIds(),
  nextSlot: driver.nextSlot(),
  infos: driver.taskIds().map((id) => driver.info(id)),
})

/** Whether `e` is one of the typed schedule errors. */
export const isScheduleError = Errors.isScheduleError
