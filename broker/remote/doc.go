// Package remote is a broker.Client for endpoints on the network: Azure
// Service Bus, the Service Bus emulator and peeklock serve (the Service Bus
// dialect of AMQP 1.0, whose vocabulary is package broker/sbamqp, over
// github.com/Azure/go-amqp), and generic AMQP 1.0 brokers such as RabbitMQ
// with its AMQP 1.0 plugin.
//
// # Connecting
//
// ParseConnectionString reads Azure connection strings and amqp:// URLs;
// Dial connects. Service Bus endpoints authenticate with SASL ANONYMOUS and
// then put a token on the $cbs node for every entity address before its
// links attach: a SAS token signed from the connection string's key (renewed
// before it expires), a ready-made SharedAccessSignature, or a Microsoft
// Entra ID token (azidentity's DefaultAzureCredential) when only a
// namespace is given. Generic brokers get SASL PLAIN.
//
// # What it does
//
// Browsing is the non-destructive peek of the $management node, filtered by
// the message state annotation; the Locked pane holds the locks this client
// took itself (a remote endpoint shows no one else's). Receiving on Service
// Bus uses cached peek-lock (settle mode second) or receive-and-delete links
// with explicit credit, drained after each receive so that no message is
// locked unseen; settling goes back on the receiving link, or through
// update-disposition for messages received by sequence number (or whose
// link closed). Sessions (broker.SessionClient) are taken as Service Bus
// session receivers take them: a peek-lock link attached with the
// com.microsoft:session-filter holds the session lock for as long as it is
// attached; its messages settle on it, the lock is renewed and the state
// read through the management node, and detaching the link gives the lock
// back. Its deferred messages are received by sequence number naming the
// session and its link, and settle through update-disposition naming that
// link, as the SDK settles them; their locks go with the session lock. Entities and counts come from the ATOM admin API over
// HTTP(S); where the credential lacks Manage rights, the client falls back
// to the configured entity names and says so in Notice (and Endpoint).
//
// Generic brokers (RabbitMQ 3.10 with rabbitmq_amqp1_0) get
// receive-and-inspect: deliveries are held unsettled (settle mode first,
// since mode second is refused) on a single-use link that closes once they
// are all settled; complete is accept, abandon is release, dead-letter is
// reject. They are never drained (RabbitMQ does not answer go-amqp's drain
// and can stall the connection after one), so peek-lock credit goes out one
// message at a time.
//
// # Generic addresses
//
// An entity name is what the user typed (--entity, or : in the dashboard).
// A name starting with "/" is an address and is used as it is on every
// broker: /queue/NAME, /amq/queue/NAME, /exchange/NAME/KEY or /topic/KEY on
// RabbitMQ. A plain name depends on the broker, which the connection's open
// names (its "product" property): on RabbitMQ it is a queue, received from
// as /amq/queue/NAME and sent to as /queue/NAME (a send to a missing
// /amq/queue/ address is accepted and dropped; /queue/ declares the queue);
// on any other broker (ActiveMQ Artemis, Qpid, Solace…) it is the address
// itself, as those brokers name queues.
//
// A broker may answer a receiver's requested sender settle mode with another
// (RabbitMQ answers "mixed" with "unsettled"); go-amqp then fails the
// attach, and attachReceiver attaches again taking the broker's mode where
// the receive still works: a peek-lock takes "mixed" but refuses "settled"
// (the messages would leave the queue on arrival), and receive-and-delete
// takes either and accepts every delivery that arrives unsettled.
//
// # Faults
//
// Every operation has a timeout. A dropped connection is redialled with
// exponential backoff; State says "connected" or "reconnecting (attempt
// N)". Locks held on a lost connection are lost: settling them fails at
// once with broker.ErrLockLost, and using a session lock with
// broker.ErrSessionLockLost. AMQP error conditions map to broker codes
// through one table (errors.go), keeping the Service Bus tracking id.
//
// # Lock order
//
//  1. connection.claimMu (serialises put-token calls; held across one)
//  2. Client.mu, connection.mu, heldLocks.mu, heldSessions.mu,
//     adminClient.mu, rpcLink.mu:
//     leaves, each taken alone and never across a network call
//
// receiveLink.mu serialises the credit cycles of one link and is held
// across them; no other mutex is taken while waiting on the network.
package remote
