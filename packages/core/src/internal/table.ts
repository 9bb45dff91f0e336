/**
 * @internal
 * The kernel's task table: one 32-byte row per task in a single `ArrayBuffer`, read through
 * three views, plus two JS arrays holding each row's object references: its job and its side
 * object.
 *
 * Runs are taken in slot order, not in the order tasks were accepted, so rows are visited at
 * random. Interleaving a row's fields puts them in one cache line: one miss per row instead of
 * one per field (measured: separate arrays per field cost ~1.6x the run time at 1M tasks). The
 * references are the exception: most tasks have no side object, and the row's `hasExtra` flag
 * says so, so a run reads only the job, from an array half as large as one holding both.
 *
 * Row layout (byte offsets):
 * ```text
 *  0  f64  slot        pending run's slot while scheduled, else the last run's slot (epoch ms)
 *  8  f64  ticket      while scheduled or paused: the order key of its latest heap entry (older
 *                      ones are dead); while running: when its run started (epoch ms); once
 *                      final: its retention ticket (see finalRing)
 * 16  u32  generation  bumped whenever the row is given to a new task (never 0)
 * 20  u32  attempt     TaskContext.attempt
 * 24  u32  runs        TaskContext.runNumber
 * 28  u8   state       Lifecycle state index, or FREE
 * 29  u8   rank        priority rank: 0 high, 1 normal, 2 low
 * 30  u8   hasExtra    1 when extras[i] holds a side object: lets a read skip that cold array
 * 31  u8   anchor      which clock the task's times follow (WALL_TASK, WALL_SLOT bits; see Kernel.shift)
 * ```
 */
export const ROW_BYTES = 32

/** @internal */
export class Table<J, X> {
  private f64: Float64Array
  private u32: Uint32Array
  private u8: Uint8Array
  /** `jobs[i]` is row i's job; as long as the rows, holes read as `undefined`. */
  // Stryker disable next-line ArrayDeclaration: equivalent, a row's job is written when a task takes the row, before any read
  private jobs: Array<J | undefined> = []
  /** `extras[i]` is row i's side object; read only when the row's `hasExtra` flag is set. */
  // Stryker disable next-line ArrayDeclaration: equivalent, read only under the row's flag, set with the entry
  private extras: Array<X | undefined> = []

  constructor(capacity: number) {
    const buffer = new ArrayBuffer(capacity * ROW_BYTES)
    this.f64 = new Float64Array(buffer)
    this.u32 = new Uint32Array(buffer)
    this.u8 = new Uint8Array(buffer)
    this.jobs.length = capacity
  }

  get capacity(): number {
    return this.u8.length / ROW_BYTES
  }

  get byteLength(): number {
    return this.u8.length
  }

  grow(capacity: number): void {
    const buffer = new ArrayBuffer(capacity * ROW_BYTES)
    const u8 = new Uint8Array(buffer)
    u8.set(this.u8)
    this.f64 = new Float64Array(buffer)
    this.u32 = new Uint32Array(buffer)
    this.u8 = u8
    // Sized with the rows, so the job array grows by doubling in the same step instead of by
    // the engine's ~1.5x on appends: fewer copies of an array every task writes to.
    this.jobs.length = capacity
  }

  slot(i: number): number {
    return this.f64[i << 2] as number
  }
  setSlot(i: number, v: number): void {
    this.f64[i << 2] = v
  }
  ticket(i: number): number {
    return this.f64[(i << 2) + 1] as number
  }
  setTicket(i: number, v: number): void {
    this.f64[(i << 2) + 1] = v
  }
  gen(i: number): number {
    return this.u32[(i << 3) + 4] as number
  }
  setGen(i: number, v: number): void {
    this.u32[(i << 3) + 4] = v
  }
  attempt(i: number): number {
    return this.u32[(i << 3) + 5] as number
  }
  setAttempt(i: number, v: number): void {
    this.u32[(i << 3) + 5] = v
  }
  runs(i: number): number {
    return this.u32[(i << 3) + 6] as number
  }
  setRuns(i: number, v: number): void {
    this.u32[(i << 3) + 6] = v
  }
  state(i: number): number {
    return this.u8[(i << 5) + 28] as number
  }
  setState(i: number, v: number): void {
    this.u8[(i << 5) + 28] = v
  }
  rank(i: number): number {
    return this.u8[(i << 5) + 29] as number
  }
  setRank(i: number, v: number): void {
    this.u8[(i << 5) + 29] = v
  }
  job(i: number): J | undefined {
    return this.jobs[i]
  }
  setJob(i: number, v: J | undefined): void {
    this.jobs[i] = v
  }
  extra(i: number): X | undefined {
    return this.u8[(i << 5) + 30] === 0 ? undefined : this.extras[i]
  }
  setExtra(i: number, v: X | undefined): void {
    const extras = this.extras
    if (i < extras.length) extras[i] = v
    else if (v !== undefined) {
      // Grown only to the last row that ever had a side object: no cost for plain tasks. Filled
      // without gaps, so the array keeps fast elements instead of turning into a dictionary.
      while (extras.length < i) extras.push(undefined)
      extras.push(v)
    }
    this.u8[(i << 5) + 30] = v === undefined ? 0 : 1
  }
  hasExtra(i: number): boolean {
    return this.u8[(i << 5) + 30] === 1
  }
  anchor(i: number): number {
    return this.u8[(i << 5) + 31] as number
  }
  setAnchor(i: number, v: number): void {
    this.u8[(i << 5) + 31] = v
  }
}

/** @internal Anchor bit: the task's schedule is calendar time (`at`, cron, custom). */
export const WALL_TASK = 1
/** @internal Anchor bit: the pending slot is calendar time (a wall task's slot, not a retry's). */
export const WALL_SLOT = 2
