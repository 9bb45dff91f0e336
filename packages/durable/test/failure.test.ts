/**
 * Store failures classified (issue 28, item 6: `EFBIG` was `other`): the classifier on the
 * codes a driver or the system gives, the file size limit read from Linux's
 * `/proc/self/limits`, and a real SQLite store filled past `ulimit -f`.
 */
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Failure from "../src/internal/failure.ts"
import { fixture, repoRoot, tsxArgs } from "./children.ts"
import { tempDir } from "./helpers.ts"

/** A driver error with `code`, wrapped as the SQLite client wraps it. */
const wrapped = (code: string, message: string) =>
  new SqlError({
    reason: classifySqliteError(Object.assign(new Error(message), { code }), {
      message: "sqlite execute failed",
      operation: "execute",
    }),
  })

describe("no room to write is disk-full", () => {
  it.each([
    ["SQLITE_FULL", "database or disk is full"],
    ["53100", "could not extend file"],
    ["ENOSPC", "no space left on device"],
    ["EDQUOT", "disk quota exceeded"],
    ["EFBIG", "file too large"],
  ])("%s", (code, message) => {
    expect(Failure.diagnose(wrapped(code, message))).toEqual({
      reason: "disk-full",
      detail: `${message} (${code})`,
    })
    expect(Failure.diagnose(Object.assign(new Error(message), { code })).reason).toBe("disk-full")
  })

  it("a plain I/O error stays other: it may be a failing device", () => {
    expect(Failure.diagnose(wrapped("SQLITE_IOERR_WRITE", "disk I/O error")).reason).toBe("other")
  })
})

describe("the file size limit", () => {
  const limits = (value: string) =>
    [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max cpu time              unlimited            unlimited            seconds   ",
      `Max file size             ${value.padEnd(20)} ${value.padEnd(20)} bytes     `,
      "Max data size             unlimited            unlimited            bytes     ",
    ].join("\n")

  it("is read from /proc/self/limits; unlimited is none", () => {
    expect(Failure.fileSizeLimit(limits("2097152"))).toBe(2_097_152)
    expect(Failure.fileSizeLimit(limits("unlimited"))).toBeUndefined()
    expect(Failure.fileSizeLimit("")).toBeUndefined()
  })

  it("a file within one frame of it is at it; a file far below, or no limit, is not", () => {
    expect(Failure.pastSizeLimit([1_000, 2_000_000], 2_097_152)).toBe(true)
    expect(Failure.pastSizeLimit([1_000, 1_000_000], 2_097_152)).toBe(false)
    expect(Failure.pastSizeLimit([2_097_152], undefined)).toBe(false)
  })

  it("a SQLite store filled past ulimit -f fails with StoreError disk-full, saying why", () => {
    const t = tempDir()
    const limit = 2 * 1024 * 1024
    const out = execFileSync(
      "prlimit",
      [
        `--fsize=${limit}:${limit}`,
        "--",
        process.execPath,
        ...tsxArgs,
        fixture("fill-store.ts"),
        t.file(),
      ],
      { cwd: repoRoot, encoding: "utf8" },
    )
    const result = JSON.parse(out.trim().split("\n").pop() as string)
    expect(result).toMatchObject({ ok: false, tag: "StoreError", reason: "disk-full" })
    expect(result.message).toContain(`file size limit of ${limit} bytes (ulimit -f) (EFBIG)`)
    t.cleanup()
  }, 60_000)
})
