/**
 * The calling thread's CPU time and its wait for a CPU, from Linux's
 * `/proc/thread-self/schedstat`: a late run is late either because the thread was busy (its own
 * work, a collection) or because it was runnable and the kernel gave the CPU to someone else. On
 * a shared machine the second one can dominate the tail of real-clock lateness (part 3), and
 * neither the event loop nor V8 can see it.
 */
import { readFileSync } from "node:fs"

/** A thread's scheduler counters, in ms since it started. */
export interface ThreadSched {
  /** Time spent running on a CPU. */
  readonly onCpuMs: number
  /** Time spent runnable but waiting on a run queue. */
  readonly waitMs: number
}

/**
 * Reads schedstat's text: "<ns on a CPU> <ns waiting on a run queue> <timeslices>". `undefined`
 * when it is not three non-negative integers (a kernel without schedstats shows zeros, which do
 * parse: the caller then sees no time at all).
 */
export const parseSchedstat = (text: string): ThreadSched | undefined => {
  const fields = text.trim().split(/\s+/)
  if (fields.length !== 3 || !fields.every((f) => /^\d+$/.test(f))) return undefined
  return { onCpuMs: Number(fields[0]) / 1e6, waitMs: Number(fields[1]) / 1e6 }
}

/** The calling thread's counters now, or `undefined` where Linux's schedstat is not there. */
export const readThreadSched = (): ThreadSched | undefined => {
  try {
    return parseSchedstat(readFileSync("/proc/thread-self/schedstat", "utf8"))
  } catch {
    return undefined
  }
}
