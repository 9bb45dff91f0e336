/**
 * Every ```ts block of the package README type-checks with the package's compiler settings.
 * Most blocks start a worker that runs until a signal, so they are only type-checked. They are
 * written next to this file, because the package name resolves from inside the package only,
 * and removed afterwards.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"
import type { Postgres, Sqlite } from "../src/index.ts"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks = CodeBlocks.fromMarkdown(readFileSync(join(root, "README.md"), "utf8"), "README ")

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README examples", () => {
  it("cover the controls", () => {
    expect(blocks.some((b) => b.code.includes("pauseAll("))).toBe(true)
    expect(blocks.some((b) => b.code.includes("breakers:"))).toBe(true)
  })

  it("every block type-checks with the package's compiler settings", () => {
    expect(CodeBlocks.typecheck(blocks, root, dir)).toEqual([])
  }, 300_000)
})

// Every field of the stores' options, as the types declare them: adding a field without adding
// it here fails the type-check, and the test below fails until the README names it.
const sqliteOptions: Record<keyof Sqlite.SqliteStoreConfig, true> = {
  filename: true,
  synchronous: true,
  exclusive: true,
  lockTimeoutMs: true,
  readOnly: true,
}
const postgresOptions: Record<keyof Postgres.PostgresStoreConfig, true> = {
  url: true,
  host: true,
  port: true,
  database: true,
  username: true,
  password: true,
  maxConnections: true,
  connectTimeout: true,
  statementTimeout: true,
}

describe("README store options", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const section = (from: string, to: string) =>
    readme.slice(readme.indexOf(from), readme.indexOf(to))

  it("names every field of Sqlite.layer's options", () => {
    const list = section("`Sqlite.layer` takes", "Both run the same migrations")
    for (const key of Object.keys(sqliteOptions)) expect(list).toContain(`\`${key}\``)
  })

  it("names every field of Postgres.layer's options", () => {
    const list = section("`Postgres.layer` takes", "`Sqlite.layer` takes")
    for (const key of Object.keys(postgresOptions)) expect(list).toContain(`${key}\``)
  })
})
