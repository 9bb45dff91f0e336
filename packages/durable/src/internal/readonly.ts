/**
 * @internal
 * Reading a SQLite store in a directory this process may not write. In WAL mode every reader
 * maps the `-shm` index beside the file, and creates it when it is missing (a store whose last
 * user closed it cleanly, or that a scheduler holds in exclusive locking mode, has none): in a
 * directory it cannot write, the open fails ("attempt to write a readonly database"). SQLite's
 * `immutable` open would skip the index, but better-sqlite3 opens no URI filenames. So such a
 * store is read from a snapshot: the file and its `-wal` copied into a private temporary
 * directory, read there and removed at close. It is the store as it was at open, which is all a
 * read-only command needs, and nothing is written beside the store.
 */
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"

/** How a read-only open reads the file: where it is, or from a snapshot. */
export type Plan = "in-place" | "snapshot"

/**
 * The plan for a read-only open: in place when the directory can be written (the index can be
 * created) or the index exists already (a live writer's: SQLite reads it without writing);
 * otherwise from a snapshot.
 */
export const plan = (facts: {
  readonly directoryWritable: boolean
  readonly indexExists: boolean
}): Plan => (facts.directoryWritable || facts.indexExists ? "in-place" : "snapshot")

/** The plan for `filename`, from the file system. */
export const planFor = (filename: string): Plan => {
  let directoryWritable = true
  try {
    accessSync(dirname(filename), constants.W_OK)
  } catch {
    directoryWritable = false
  }
  return plan({ directoryWritable, indexExists: existsSync(`${filename}-shm`) })
}

/**
 * Whether a process holds a POSIX lock on `filename` (Linux's `/proc/locks`, by inode): a
 * scheduler holding the store in exclusive locking mode, which writes it without an index, so
 * a copy could be torn. Unknown (not Linux) is false.
 */
export const lockedByAnother = (filename: string): boolean => {
  let locks: string
  try {
    locks = readFileSync("/proc/locks", "utf8")
  } catch {
    return false
  }
  const inode = statSync(filename).ino
  return locks.split("\n").some((line) => line.split(/\s+/).some((f) => f.endsWith(`:${inode}`)))
}

/** Copies `filename` and its `-wal` into a new private directory; returns the copy's path. */
export const snapshot = (
  filename: string,
): { readonly file: string; readonly remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-snapshot-"))
  const file = join(dir, basename(filename))
  try {
    copyFileSync(filename, file)
    if (existsSync(`${filename}-wal`)) copyFileSync(`${filename}-wal`, `${file}-wal`)
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
