/**
 * @internal
 * The ledger's ring storage (`Ledger.Store`): one array per field, position `p` of each being
 * one record, and how a common `ran` record is written to and rebuilt from those numbers.
 *
 * A record is kept either as its object ({@link OBJECT}) or, for a run the columns can rebuild
 * exactly, as numbers only ({@link RUN}): an object per run outlived the young generation and
 * cost about a tenth of a run's time in a burst. Which records qualify is the store's decision;
 * this module only lays the numbers out. It does not import `Ledger.ts` (the objects' type is a
 * parameter), so the dependency points one way.
 */
import { Kernel, Lifecycle, Rules, Task } from "@tickwork/core"

/** A record kept as its object. */
export const OBJECT = 0
/** A `ran` record kept as columns (see `Ledger.Store.addRun`). */
export const RUN = 1

/** The continuations a {@link RUN} record's `continuation` column indexes. */
const continuations: ReadonlyArray<Task.Continuation> = ["next", "final", "retry"]

/** The ring's arrays: position `p` of each is one record; `O` is the type of kept objects. */
export interface Columns<O> {
  readonly size: number
  /** 1 for a dropped record still taking its place in the ring. */
  readonly dropped: Uint8Array
  readonly rows: Int32Array
  readonly gens: Float64Array
  /** The task's previous and next record, or -1. */
  readonly prev: Int32Array
  readonly next: Int32Array
  /** How a record is kept: {@link OBJECT} or {@link RUN}. */
  readonly how: Uint8Array
  /** The object of an {@link OBJECT} record. */
  readonly objects: Array<O | undefined>
  // The columns of a RUN record.
  readonly slots: Float64Array
  readonly scheduledFor: Float64Array
  readonly startedAt: Float64Array
  readonly finishedAt: Float64Array
  /** NaN for none. */
  readonly nextSlots: Float64Array
  readonly attempts: Float64Array
  readonly runNumbers: Float64Array
  /** Index into `Lifecycle.states`, and into {@link continuations}. */
  readonly states: Uint8Array
  readonly continuation: Uint8Array
}

/** A ring of `size` positions, all zero (links and rows are written before they are read). */
export const makeColumns = <O>(size: number): Columns<O> => ({
  size,
  dropped: new Uint8Array(size),
  rows: new Int32Array(size),
  gens: new Float64Array(size),
  prev: new Int32Array(size),
  next: new Int32Array(size),
  how: new Uint8Array(size),
  // Stryker disable next-line ArrayDeclaration: equivalent, each position is written before it is read
  objects: new Array(size).fill(undefined),
  slots: new Float64Array(size),
  scheduledFor: new Float64Array(size),
  startedAt: new Float64Array(size),
  finishedAt: new Float64Array(size),
  nextSlots: new Float64Array(size),
  attempts: new Float64Array(size),
  runNumbers: new Float64Array(size),
  states: new Uint8Array(size),
  continuation: new Uint8Array(size),
})

/**
 * Writes `record` at `p` as a {@link RUN} record. The caller has checked that the columns rebuild
 * it exactly: a succeeded run with no value, of a generated id, that merged or dropped no slot.
 */
export const writeRun = <O>(ring: Columns<O>, p: number, record: Task.RunRecord): void => {
  ring.how[p] = RUN
  ring.slots[p] = record.slot
  ring.scheduledFor[p] = record.scheduledFor
  ring.startedAt[p] = record.startedAt
  ring.finishedAt[p] = record.finishedAt
  ring.nextSlots[p] = record.nextSlot ?? Number.NaN
  ring.attempts[p] = record.attempt
  ring.runNumbers[p] = record.runNumber
  ring.states[p] = Lifecycle.states.indexOf(record.state)
  ring.continuation[p] = continuations.indexOf(record.continuation)
}

/** The {@link RUN} record at `p`, rebuilt as the kernel made it (its id from row and generation). */
export const readRun = <O>(ring: Columns<O>, p: number): Task.RunRecord => {
  const row = ring.rows[p] as number
  const generation = ring.gens[p] as number
  const nextSlot = ring.nextSlots[p] as number
  return Rules.record(
    {
      id: Kernel.formatId(row, generation),
      generation,
      slot: ring.slots[p] as number,
      scheduledFor: ring.scheduledFor[p] as number,
      startedAt: ring.startedAt[p] as number,
      attempt: ring.attempts[p] as number,
      runNumber: ring.runNumbers[p] as number,
      merged: undefined,
    },
    Task.succeeded,
    ring.finishedAt[p] as number,
    {
      state: Lifecycle.states[ring.states[p] as number] as Task.TaskState,
      continuation: continuations[ring.continuation[p] as number] as Task.Continuation,
      nextSlot: Number.isNaN(nextSlot) ? undefined : nextSlot,
      dropped: undefined,
      pausedReason: undefined,
    },
  )
}

/**
 * Copies the record at `p` of `from` to `q` of `to`, but for its links (`prev`, `next`), which
 * a compaction maps to the new positions once every record has moved.
 */
export const copyPosition = <O>(from: Columns<O>, p: number, to: Columns<O>, q: number): void => {
  to.dropped[q] = 0
  to.rows[q] = from.rows[p] as number
  to.gens[q] = from.gens[p] as number
  to.how[q] = from.how[p] as number
  to.objects[q] = from.objects[p]
  to.slots[q] = from.slots[p] as number
  to.scheduledFor[q] = from.scheduledFor[p] as number
  to.startedAt[q] = from.startedAt[p] as number
  to.finishedAt[q] = from.finishedAt[p] as number
  to.nextSlots[q] = from.nextSlots[p] as number
  to.attempts[q] = from.attempts[p] as number
  to.runNumbers[q] = from.runNumbers[p] as number
  to.states[q] = from.states[p] as number
  to.continuation[q] = from.continuation[p] as number
}
