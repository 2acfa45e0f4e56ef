package amqpserver

import "fmt"

// actor describes a link of the connection for the histories of the
// messages it touches (the link's engine handle, engine.Engine.As): the
// connection as the connections view names it, its container id and the
// link name. The container is known once the open frame has come, before
// any attach.
func (c *conn) actor(link string) string {
	c.info.mu.Lock()
	container := c.info.container
	c.info.mu.Unlock()
	return fmt.Sprintf("connection %016x (container %q) link %q", c.owner, container, link)
}
