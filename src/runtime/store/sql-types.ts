/** What the SQL stores' statements take and return (shared by sql.ts and tasks-sql.ts). */

/** One row as a driver returns it. */
export type Row = Readonly<Record<string, unknown>>

/** A statement parameter. */
export type SqlParam = string | number | null
