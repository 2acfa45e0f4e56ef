// Scenario group "transport": one send, receive and complete, over whatever
// transport the connection string and the environment choose: plain AMQP
// (UseDevelopmentEmulator=true), AMQP over TLS (no emulator flag; trust the
// CA with NODE_EXTRA_CA_CERTS), or AMQP over WebSockets when
// PEEKLOCK_WEBSOCKETS=1 (the `ws` package, wss://HOST:PORT/$servicebus/websocket).
// Usage: PEEKLOCK_CONNECTION_STRING=... [PEEKLOCK_WEBSOCKETS=1] node transport.mjs QUEUE
import { ServiceBusClient } from "@azure/service-bus";
import WebSocket from "ws";
import { run, view, connectionString } from "./lib.mjs";

const queue = process.argv[2];

await run(async () => {
  const options = { retryOptions: { maxRetries: 1, retryDelayInMs: 50, maxRetryDelayInMs: 200, timeoutInMs: 10000 } };
  if (process.env.PEEKLOCK_WEBSOCKETS === "1") {
    options.webSocketOptions = { webSocket: WebSocket };
  }
  const client = new ServiceBusClient(connectionString, options);
  try {
    const sender = client.createSender(queue);
    await sender.sendMessages({ body: "over the wire", messageId: "t1" });
    await sender.close();
    const receiver = client.createReceiver(queue);
    const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    return { received: got.map(view), websockets: options.webSocketOptions !== undefined };
  } finally {
    await client.close();
  }
});
