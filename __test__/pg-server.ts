// A real PostgreSQL for the suites (bench/pg-server.js, shared with the benchmarks). Where
// PostgreSQL is not installed the suites that need it skip with a message; in CI
// (CI=true) that is an error instead, since .ci/run installs it.
import { createRequire } from 'node:module'

interface Server {
  readonly port: number
  url(database?: string): string
  /** A new empty database on the server: its URL. */
  database(): string
  up(): void
  kill(): void
  sql(text: string, database?: string): string
  stop(): void
}

const shared = createRequire(import.meta.url)('../bench/pg-server.js') as {
  PgServer: { start(): Promise<Server> }
  pgInstalled: boolean
}

export const pgInstalled = shared.pgInstalled
export type PgServer = Server
export const PgServer = shared.PgServer

/** The suite's server, started before its tests and stopped after them (where installed). */
export function serverForSuite(beforeAll: (f: () => Promise<void>) => void, afterAll: (f: () => void) => void): () => Server {
  let server: Server | undefined
  beforeAll(async () => {
    if (pgInstalled) server = await PgServer.start()
  })
  afterAll(() => server?.stop())
  return () => {
    if (!server) throw new Error('PostgreSQL is not running')
    return server
  }
}

if (!pgInstalled) {
  if (process.env.CI) throw new Error('PostgreSQL is not installed, and CI must run the PostgreSQL suites (.ci/run installs it)')
  console.warn('PostgreSQL is not installed: skipping the suites that need a real PostgreSQL (apt-get install postgresql)')
}
