// Scenario group "errors": a wrong key and an unknown entity, for a sender
// and a receiver, each with the SDK's error code.
// Usage: PEEKLOCK_CONNECTION_STRING=... node errors.mjs QUEUE MISSING
import { ServiceBusClient } from "@azure/service-bus";
import { run, errorOf, connectionString } from "./lib.mjs";

const [queue = "q", missing = "missing"] = process.argv.slice(2);

/** The SDK's error of an operation, or "ok". */
async function outcome(op) {
  try {
    await op();
    return "ok";
  } catch (err) {
    const { name, code } = errorOf(err);
    return { name, code };
  }
}

await run(async (client) => {
  const wrong = new ServiceBusClient(connectionString.replace(/SharedAccessKey=[^;]*/, "SharedAccessKey=wrong"), {
    retryOptions: { maxRetries: 0, timeoutInMs: 10000 },
  });
  const out = {
    wrongKeySend: await outcome(() => wrong.createSender(queue).sendMessages({ body: "x" })),
    wrongKeyReceive: await outcome(() => wrong.createReceiver(queue).receiveMessages(1, { maxWaitTimeInMs: 1000 })),
    wrongKeyPeek: await outcome(() => wrong.createReceiver(queue).peekMessages(1)),
    missingSend: await outcome(() => client.createSender(missing).sendMessages({ body: "x" })),
    missingReceive: await outcome(() => client.createReceiver(missing).receiveMessages(1, { maxWaitTimeInMs: 1000 })),
    missingPeek: await outcome(() => client.createReceiver(missing).peekMessages(1)),
    goodAfterwards: await outcome(() => client.createSender(queue).sendMessages({ body: "fine" })),
  };
  await wrong.close();
  return out;
});
