/**
 * Issue 28, item 6: a read-only open (the CLI's, the dashboard's) of a SQLite store in a
 * directory this process may not write. In WAL mode SQLite must create the `-shm` index beside
 * the file, and could not: it is read from a private snapshot instead, and nothing is written
 * beside the store.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import * as ReadOnly from "../src/internal/readonly.ts"
import { fixture, repoRoot, tsxArgs } from "./children.ts"
import { recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

describe("the read-only open's plan", () => {
  it("reads in place where the index can be created or exists; from a snapshot otherwise", () => {
    expect(ReadOnly.plan({ directoryWritable: true, indexExists: false })).toBe("in-place")
    expect(ReadOnly.plan({ directoryWritable: true, indexExists: true })).toBe("in-place")
    expect(ReadOnly.plan({ directoryWritable: false, indexExists: true })).toBe("in-place")
    expect(ReadOnly.plan({ directoryWritable: false, indexExists: false })).toBe("snapshot")
  })

  it.live(
    "a store in a directory of mode 0555 opens read-only, lists its tasks, and gains no file",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const { handler } = recording()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          d.schedule({ id: "a", handler, payload: { n: 1 }, schedule: Schedule.once("1 hour") }),
        )
        const before = readdirSync(t.dir)
        chmodSync(t.dir, 0o555)
        // The snapshot's own temporary directory, to see that it is removed.
        const scratch = mkdtempSync(join(tmpdir(), "tickwork-scratch-"))
        // As root, permissions do not stop a write: drop the capabilities that override them
        // (setpriv), so the directory's mode applies as it does to any other user.
        const root = process.getuid?.() === 0
        const args = [...tsxArgs, fixture("read-store.ts"), file]
        const out = execFileSync(
          root ? "setpriv" : process.execPath,
          root
            ? [
                "--inh-caps=-dac_override,-dac_read_search",
                "--bounding-set=-dac_override,-dac_read_search",
                "--",
                process.execPath,
                ...args,
              ]
            : args,
          { cwd: repoRoot, encoding: "utf8", env: { ...process.env, TMPDIR: scratch } },
        )
        const result = JSON.parse(out.trim().split("\n").pop() as string)
        expect(result).toEqual({ ok: true, ids: ["a"] })
        expect(readdirSync(t.dir)).toEqual(before)
        expect(readdirSync(scratch).filter((f) => f.startsWith("tickwork-snapshot-"))).toEqual([])
        rmSync(scratch, { recursive: true, force: true })
        chmodSync(t.dir, 0o755)
        t.cleanup()
      }),
    60_000,
  )
})
