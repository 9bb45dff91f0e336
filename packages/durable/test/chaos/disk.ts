/**
 * A full disk under a live SQLite store, made and undone from outside the worker process that
 * holds the store (the SQLite chaos run's `disk-full` fault). Two ways, the first this machine
 * allows:
 * - `tmpfs`: the store's directory is a tmpfs of fixed size (mounting needs root). Filling it
 *   writes a ballast file until the file system answers `ENOSPC`: from then on no file of the
 *   store can grow (SQLite: `SQLITE_FULL`), as on a real full disk, while writes within the
 *   space a file already has still go through. Freeing deletes the ballast.
 * - `ulimit -f`: the worker's file size limit is lowered (`prlimit --pid`) to the size the
 *   store file has then: it cannot grow, nor its WAL past that offset (`EFBIG`); harsher than a
 *   full disk (a WAL larger than the file cannot be rewritten in place either). Freeing lifts
 *   the limit again.
 * Either way the store must report `disk-full` (the worker prints the scheduler's warning).
 * `TICKWORK_CHAOS_DISK=ulimit` asks for the second way on a machine that allows the first.
 */
import { execFileSync } from "node:child_process"
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs"
import { join } from "node:path"

/** A directory for the store whose disk can be filled and freed again. */
export interface Disk {
  /** The directory to put the store file in. */
  readonly dir: string
  /** How the disk is filled: `tmpfs` or `ulimit -f`. */
  readonly how: "tmpfs" | "ulimit -f"
  /** Fills the disk under the store held by process `pid`; says how full, for the report. */
  readonly fill: (pid: number, file: string) => string
  /** Frees it again. */
  readonly free: (pid: number) => void
  /** Unmounts what was mounted (the directory's parent is removed by its owner). */
  readonly close: () => void
}

const code = (e: unknown) =>
  typeof e === "object" && e !== null && "code" in e ? String(e.code) : ""

const size = (file: string) => {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}

/** A tmpfs of `sizeMb` on `dir`, or `undefined` when this process may not mount one. */
const tmpfs = (dir: string, sizeMb: number): Disk | undefined => {
  if (process.env.TICKWORK_CHAOS_DISK === "ulimit" || process.getuid?.() !== 0) return undefined
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir], {
      stdio: "ignore",
    })
  } catch {
    return undefined
  }
  const ballast = join(dir, "ballast")
  return {
    dir,
    how: "tmpfs",
    fill: () => {
      const fd = openSync(ballast, "w")
      // Large writes, then page-sized ones: the last free page goes too.
      const chunk = Buffer.alloc(1 << 20)
      let n = chunk.length
      let written = 0
      try {
        for (;;) {
          try {
            written += writeSync(fd, chunk, 0, n)
          } catch (e) {
            if (code(e) !== "ENOSPC") throw e
            if (n === 4_096) break
            n = 4_096
          }
        }
      } finally {
        closeSync(fd)
      }
      return `tmpfs of ${sizeMb} MiB filled by a ballast of ${(written / 2 ** 20).toFixed(1)} MiB`
    },
    free: () => rmSync(ballast, { force: true }),
    close: () => {
      try {
        execFileSync("umount", [dir], { stdio: "ignore" })
      } catch {
        // Still busy (a worker that has not exited yet): detach it; it goes when unused.
        execFileSync("umount", ["-l", dir], { stdio: "ignore" })
      }
    },
  }
}

/** The worker's file size limit, lowered and lifted with `prlimit --pid` (util-linux). */
const ulimit = (dir: string): Disk => ({
  dir,
  how: "ulimit -f",
  fill: (pid, file) => {
    const limit = size(file)
    // Only the soft limit: lifting it again needs no privilege.
    execFileSync("prlimit", ["--pid", String(pid), `--fsize=${limit}:`], { stdio: "ignore" })
    return `file size limit of ${limit} bytes (the store file's size; its WAL ${size(`${file}-wal`)})`
  },
  free: (pid) => {
    try {
      execFileSync("prlimit", ["--pid", String(pid), "--fsize=unlimited:"], { stdio: "ignore" })
    } catch {
      // The process is gone: its limit went with it.
    }
  },
  close: () => {},
})

/**
 * A directory `store` under `parent` whose disk can be filled: a tmpfs of `sizeMb` where this
 * process may mount one, else the worker's file size limit.
 */
export const disk = (parent: string, sizeMb: number): Disk => {
  const dir = join(parent, "store")
  mkdirSync(dir, { recursive: true })
  return tmpfs(dir, sizeMb) ?? ulimit(dir)
}
