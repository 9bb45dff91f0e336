/** The machine, the process, garbage collection and memory readings. */
import * as os from "node:os"
import { getHeapStatistics } from "node:v8"

export interface Environment {
  readonly date: string
  readonly node: string
  readonly v8: string
  readonly platform: string
  readonly cpus: number
  readonly cpuModel: string
  readonly totalMemoryMB: number
  readonly heapLimitMB: number
}

export const environment = (): Environment => {
  const cpus = os.cpus()
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.availableParallelism?.() ?? cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    totalMemoryMB: Math.round(os.totalmem() / 2 ** 20),
    heapLimitMB: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
  }
}

export const loadAverage = (): ReadonlyArray<number> =>
  os.loadavg().map((x) => Math.round(x * 100) / 100)

/** The header line every table starts with. */
export const header = (): string => {
  const e = environment()
  return `${e.date}  node ${e.node}  ${e.cpus} CPUs (${e.cpuModel})  load avg ${loadAverage()
    .map((x) => x.toFixed(2))
    .join(" ")}`
}

const gcFn = globalThis.gc

/** Whether the process runs with --expose-gc. */
export const canCollect = (): boolean => typeof gcFn === "function"

/** Two full collections (the second one catches what the first one's finalizers freed). */
export const collect = (): void => {
  if (gcFn === undefined) throw new Error("run node with --expose-gc")
  gcFn()
  gcFn()
}

/** Bytes held by JS objects plus array buffers (typed arrays live outside the JS heap). */
export const retainedBytes = (): number => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** Used JS heap bytes, cheaper to read than process.memoryUsage(). */
export const heapUsed = (): number => getHeapStatistics().used_heap_size

/** Half the heap limit: contenders that retain kilobytes per task stop scheduling there. */
export const heapGuardBytes = (): number => getHeapStatistics().heap_size_limit * 0.5

/** Milliseconds on the monotonic clock, as an epoch time (the system clock of the core). */
export const epochNow = (): number => performance.timeOrigin + performance.now()

/** Waits for the event loop to turn (lets pending callbacks and fibers settle). */
export const settle = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Collects, lets the event loop turn (so freed array buffers are released), and collects
 * again: the state a memory reading starts from.
 */
export const quiesce = async (): Promise<void> => {
  collect()
  await settle(0)
  collect()
}
