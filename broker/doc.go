// Package broker is the contract between the dashboard and the endpoints it
// watches: the message with every Service Bus broker property (and the
// delivery, a stored message as handed to one receiver), entities with
// their settings and runtime counts, typed errors, capabilities, an event
// stream, and the Client interface that the embedded engine and the remote
// AMQP endpoint both implement.
//
// The dashboard (package model) knows this package and nothing below it.
package broker
