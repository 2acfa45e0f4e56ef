// Scenario group "rules": ServiceBusRuleManager over the subscription's
// $management node (add-rule, remove-rule, enumerate-rules): list the
// $Default rule, add a SQL rule with an action and a correlation rule, list
// them in pages, see the errors of a name in use, a bad expression and an
// unknown rule, and remove every rule, after which the subscription gets
// nothing.
// Usage: PEEKLOCK_CONNECTION_STRING=... node rules.mjs TOPIC SUBSCRIPTION
import { errorOf, run } from "./lib.mjs";

const [topic = "t", sub = "all"] = process.argv.slice(2);

/** A rule as the SDK hands it over, JSON-safe and without undefined fields. */
function ruleView(r) {
  const filter = Object.fromEntries(Object.entries(r.filter).filter(([, v]) => v !== undefined && v !== null));
  return { name: r.name, filter, action: r.action?.sqlExpression ?? null };
}

async function listAll(rules, pageSize) {
  const pages = [];
  for await (const page of rules.listRules().byPage({ maxPageSize: pageSize })) {
    pages.push(page.map((r) => r.name));
  }
  return pages;
}

await run(async (client) => {
  const rules = client.createRuleManager(topic, sub);
  const out = {};
  out.initial = (await rules.getRules()).map(ruleView);

  await rules.createRule("blue", { sqlExpression: "color = 'blue'" }, { sqlExpression: "SET seen = 'yes'" });
  await rules.createRule("corr", { subject: "red", contentType: "text/plain", applicationProperties: { n: 5, tenant: "acme" } });
  out.afterCreate = (await rules.getRules()).map(ruleView);
  out.pages = await listAll(rules, 2);

  try {
    await rules.createRule("BLUE", { sqlExpression: "1=1" });
    out.duplicate = "created";
  } catch (err) {
    out.duplicate = errorOf(err).code;
  }
  try {
    await rules.createRule("bad", { sqlExpression: "color = 'x' AND" });
    out.badSQL = "created";
  } catch (err) {
    const e = errorOf(err);
    out.badSQL = { position: /at position 16/.test(e.message), tracking: /TrackingId:/.test(e.message) };
  }

  // Messages: blue (its action applies), red (the correlation rule), and
  // one that no rule takes once $Default is gone.
  await rules.deleteRule("$Default");
  const sender = client.createSender(topic);
  await sender.sendMessages([
    { body: "b", messageId: "b", applicationProperties: { color: "blue" } },
    { body: "r", messageId: "r", subject: "red", contentType: "text/plain", applicationProperties: { n: 5, tenant: "acme" } },
    { body: "g", messageId: "g", applicationProperties: { color: "green" } },
  ]);
  const receiver = client.createReceiver(topic, sub);
  out.received = (await receiver.peekMessages(10)).map((m) => `${m.messageId}:${m.applicationProperties?.seen ?? "-"}`);

  await rules.deleteRule("blue");
  await rules.deleteRule("corr");
  try {
    await rules.deleteRule("corr");
    out.unknown = "deleted";
  } catch (err) {
    out.unknown = errorOf(err).code;
  }
  out.finally = (await rules.getRules()).map(ruleView);
  await sender.sendMessages({ body: "x", messageId: "x", applicationProperties: { color: "blue" } });
  out.receivedAfterAll = (await receiver.peekMessages(10)).length;

  await receiver.close();
  await sender.close();
  await rules.close?.();
  return out;
});
