// Shared helpers of the interop scenarios: the client from the environment,
// plain-JSON views of received messages, and the one-line JSON report.
import { ServiceBusClient } from "@azure/service-bus";
import Long from "long";

/** The emulator connection string of the listener under test. */
export const connectionString = process.env.PEEKLOCK_CONNECTION_STRING;

/** A client with short timeouts and one retry, so a failure shows at once. */
export function newClient(conn = connectionString) {
  return new ServiceBusClient(conn, {
    retryOptions: { maxRetries: 1, retryDelayInMs: 50, maxRetryDelayInMs: 200, timeoutInMs: 10000 },
  });
}

/** The type name of an application property value as the SDK hands it over. */
export function typeOf(v) {
  if (v === null) return "null";
  if (v instanceof Date) return "Date";
  if (Buffer.isBuffer(v)) return "Buffer";
  if (Long.isLong(v)) return "Long";
  return typeof v;
}

/** A JSON-safe form of a value: Long and Date as strings, Buffer as hex. */
export function plain(v) {
  if (v === null || v === undefined) return v ?? null;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return "hex:" + v.toString("hex");
  if (Long.isLong(v)) return v.toString();
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** The fields of a received message that a scenario checks, JSON-safe. */
export function view(m) {
  const out = {
    body: plain(m.body),
    bodyType: typeOf(m.body),
    messageId: m.messageId ?? null,
    sequenceNumber: m.sequenceNumber ? m.sequenceNumber.toNumber() : null,
    deliveryCount: m.deliveryCount ?? null,
    state: m.state,
  };
  if (m.sessionId !== undefined) out.sessionId = m.sessionId;
  if (m.subject !== undefined) out.subject = m.subject;
  if (m.deadLetterReason !== undefined) out.deadLetterReason = m.deadLetterReason;
  if (m.deadLetterErrorDescription !== undefined) out.deadLetterErrorDescription = m.deadLetterErrorDescription;
  return out;
}

/** Waits ms milliseconds. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The error fields a scenario checks. */
export function errorOf(err) {
  return { name: err?.name ?? null, code: err?.code ?? null, message: String(err?.message ?? err) };
}

/**
 * Runs a scenario and prints its result as one JSON line; an exception
 * prints {"error": ...} instead and sets exit status 1. A scenario that
 * hangs ends after 25 s with {"error": {"code": "ScenarioTimeout"}}.
 */
export async function run(scenario) {
  const timer = setTimeout(() => {
    process.stdout.write(JSON.stringify({ error: { name: "Error", code: "ScenarioTimeout", message: "no result after 25 s" } }) + "\n");
    process.exit(1);
  }, 25000);
  let client;
  let code = 0;
  try {
    if (!connectionString) throw new Error("PEEKLOCK_CONNECTION_STRING is not set");
    client = newClient();
    const result = await scenario(client);
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: errorOf(err), stack: String(err?.stack ?? "") }) + "\n");
    code = 1;
  }
  await client?.close().catch(() => {});
  clearTimeout(timer);
  process.exit(code);
}
