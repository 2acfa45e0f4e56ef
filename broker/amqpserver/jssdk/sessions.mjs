// Scenario group "sessions": acceptSession, acceptNextSession, session state
// get and set, renewSessionLock, and a second accept of a held session.
// Usage: PEEKLOCK_CONNECTION_STRING=... node sessions.mjs QUEUE
import { run, view, errorOf, sleep } from "./lib.mjs";

const queue = process.argv[2] ?? "sq";
const wait = { maxWaitTimeInMs: 3000 };

await run(async (client) => {
  const out = {};
  const sender = client.createSender(queue);
  await sender.sendMessages([
    { body: "a1", messageId: "a1", sessionId: "a" },
    { body: "b1", messageId: "b1", sessionId: "b" },
    { body: "a2", messageId: "a2", sessionId: "a" },
  ]);
  try {
    await sender.sendMessages({ body: "none", messageId: "none" });
    out.sendWithoutSession = "ok";
  } catch (err) {
    out.sendWithoutSession = errorOf(err).code;
  }

  const a = await client.acceptSession(queue, "a");
  out.sessionId = a.sessionId;
  const got = await a.receiveMessages(2, wait);
  out.a = got.map(view);
  out.initialState = (await a.getSessionState()) ?? null;
  await a.setSessionState("state of a");
  out.state = await a.getSessionState();
  await a.setSessionState({ step: 2 });
  out.jsonState = await a.getSessionState();
  const before = a.sessionLockedUntilUtc.getTime();
  await sleep(50);
  const renewed = await a.renewSessionLock();
  out.renewLater = renewed.getTime() > before && a.sessionLockedUntilUtc.getTime() === renewed.getTime();
  try {
    const again = await client.acceptSession(queue, "a", { maxAutoLockRenewalDurationInMs: 0 });
    await again.close();
    out.secondAccept = "ok";
  } catch (err) {
    out.secondAccept = errorOf(err).code;
  }
  for (const m of got) await a.completeMessage(m);
  await a.close();

  const next = await client.acceptNextSession(queue);
  out.nextSessionId = next.sessionId;
  const b = await next.receiveMessages(1, wait);
  out.b = b.map(view);
  await next.completeMessage(b[0]);
  await next.close();

  // State stays with the session after its receiver closed.
  const a2 = await client.acceptSession(queue, "a");
  out.stateAfterReopen = await a2.getSessionState();
  out.emptyReceive = (await a2.receiveMessages(1, { maxWaitTimeInMs: 300 })).length;
  await a2.close();
  await sender.close();
  return out;
});
