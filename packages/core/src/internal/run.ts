/**
 * @internal
 * A run as the kernel hands it to a driver, and the generated task ids (`#<row>.<generation>`).
 */
import type { Dropped } from "../MissedRun.ts"
import type { RunInfo, TaskId } from "../Task.ts"
import { NO_TAGS } from "./records.ts"

/**
 * A run taken from the kernel: the job's {@link RunInfo}, plus what the driver needs to report it.
 *
 * @category models
 * @since 0.1.0
 */
export class Run<J> implements RunInfo {
  /** Table index of the task. */
  readonly index: number
  readonly generation: number
  readonly job: J
  readonly slot: number
  readonly scheduledFor: number
  readonly startedAt: number
  readonly attempt: number
  readonly runNumber: number
  /** Grid slots that passed while this run's slot waited, merged into it (coalesce policy). */
  readonly merged: Dropped | undefined
  readonly tags: ReadonlyArray<string>
  /** A manual run (SPEC §19.1): its end restores the task's kept run instead of settling a slot. */
  readonly manual: boolean
  /** Whether the task has a caller-given id (not a generated `#<row>.<generation>`). */
  readonly named: boolean
  /**
   * @internal The flow-control cells the run counts in (SPEC §20), released when it completes;
   * `undefined` for a task with no scope.
   */
  scopes: ReadonlyArray<unknown> | undefined = undefined
  /** The id, formatted on first read for generated ids (most jobs never read it). */
  private cachedId: string | undefined

  constructor(
    index: number,
    generation: number,
    id: string | undefined,
    job: J,
    slot: number,
    scheduledFor: number,
    startedAt: number,
    attempt: number,
    runNumber: number,
    merged: Dropped | undefined,
    tags: ReadonlyArray<string> = NO_TAGS,
    manual = false,
  ) {
    this.index = index
    this.generation = generation
    this.cachedId = id
    this.named = id !== undefined
    this.job = job
    this.slot = slot
    this.scheduledFor = scheduledFor
    this.startedAt = startedAt
    this.attempt = attempt
    this.runNumber = runNumber
    this.merged = merged
    this.tags = tags
    this.manual = manual
  }

  get id(): TaskId {
    if (this.cachedId === undefined) this.cachedId = formatId(this.index, this.generation)
    return this.cachedId as TaskId
  }

  /** The run info alone, as a plain object. */
  toJSON(): RunInfo {
    return {
      id: this.id,
      generation: this.generation,
      slot: this.slot,
      scheduledFor: this.scheduledFor,
      startedAt: this.startedAt,
      attempt: this.attempt,
      runNumber: this.runNumber,
      tags: this.tags,
      ...(this.manual ? { manual: true } : {}),
    }
  }
}

/**
 * `"." + g` for the generations most rows are at: a generated id is made for every accepted task,
 * and a ready suffix saves one string conversion and one concatenation of the three.
 */
const SUFFIXES: ReadonlyArray<string> = Array.from({ length: 256 }, (_, g) => `.${g}`)

/**
 * The generated id of table row `index` at `generation`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const formatId = (index: number, generation: number): TaskId =>
  ("#" + index + (generation < SUFFIXES.length ? SUFFIXES[generation] : `.${generation}`)) as TaskId

/** @internal The form of a generated id, which a caller id may not take. */
export const GENERATED = /^#(0|[1-9]\d*)\.([1-9]\d*)$/
