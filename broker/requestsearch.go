package broker

import "strings"

// requestSearchPage is the most messages one page of a RequestSearch
// browses.
const requestSearchPage = 200

// RequestSearch is the search for the request of a reply: the message
// whose MessageId is the reply's CorrelationId. It browses (never locks)
// one page at a time, entity after entity of Plan and category after
// category: the caller browses the page Next asks for and hands it to
// Take, so that a dashboard shows the progress and can stop between two
// pages.
type RequestSearch struct {
	// CorrelationID is the reply's: the MessageId looked for.
	CorrelationID string
	// FromAddress and FromSequence are the reply itself (the address it
	// is settled at and its sequence number), which the search skips when
	// its MessageId is its CorrelationId.
	FromAddress  string
	FromSequence int64
	// Plan is the entities to search, in order (see RequestSearchPlan).
	Plan []string
	// Limit is the most messages the search browses.
	Limit int

	// at is the entity being searched, cat its category (an index of
	// Categories), next the FromSequence of the next page.
	at      int
	cat     int
	next    int64
	scanned int
}

// RequestStep is what one page of a RequestSearch told.
type RequestStep struct {
	// Found is the request, found in Entity, Category; nil when not found
	// yet.
	Found    *Message
	Entity   string
	Category Category
	// Err is the error of a browse that failed, in Entity, Category: it
	// ends the search. An entity that is gone is passed over instead.
	Err error
	// Done is set when the search ended without finding the request:
	// every entity was searched, or Limit messages (Limited).
	Done, Limited bool
}

// Next returns the browse of the next page.
func (s *RequestSearch) Next() BrowseRequest {
	return BrowseRequest{Entity: s.Plan[s.at], Category: Categories[s.cat], FromSequence: s.next,
		Max: min(requestSearchPage, s.Limit-s.scanned)}
}

// Take takes the page browsed for Next (msgs, or the browse's error): the
// request when it is there; otherwise the search moves on, or ends.
func (s *RequestSearch) Take(msgs []*Message, err error) RequestStep {
	asked := s.Next().Max
	entity, cat := s.Plan[s.at], Categories[s.cat]
	if err != nil {
		if CodeOf(err) != CodeNotFound {
			return RequestStep{Entity: entity, Category: cat, Err: err}
		}
		// The entity went away since the list: search the others.
		s.cat = len(Categories) - 1
		msgs, asked = nil, 1
	}
	s.scanned += len(msgs)
	for _, x := range msgs {
		if x.MessageID != s.CorrelationID {
			continue
		}
		if x.SequenceNumber == s.FromSequence && strings.EqualFold(browsedAddress(entity, cat, x), s.FromAddress) {
			continue // the reply itself
		}
		return RequestStep{Found: x, Entity: entity, Category: cat}
	}
	if len(msgs) >= asked && len(msgs) > 0 {
		s.next = msgs[len(msgs)-1].SequenceNumber + 1
	} else {
		s.next = 0
		s.cat++
		if s.cat == len(Categories) {
			s.cat = 0
			s.at++
		}
	}
	switch {
	case s.at == len(s.Plan):
		s.at-- // Entity and Category stay on the last one searched
		s.cat = len(Categories) - 1
		return RequestStep{Done: true}
	case s.scanned >= s.Limit:
		return RequestStep{Done: true, Limited: true}
	}
	return RequestStep{}
}

// Entity is the entity being searched, Category its category.
func (s *RequestSearch) Entity() string { return s.Plan[s.at] }

// Category is the category of Entity being searched.
func (s *RequestSearch) Category() Category { return Categories[s.cat] }

// At is the index in Plan of the entity being searched.
func (s *RequestSearch) At() int { return s.at }

// Scanned is how many messages the search has browsed.
func (s *RequestSearch) Scanned() int { return s.scanned }

// Searched is how many entities the search has looked into, the one it is
// in included.
func (s *RequestSearch) Searched() int {
	if s.cat > 0 || s.next > 0 {
		return s.at + 1
	}
	return s.at
}

// browsedAddress returns the address a message browsed in category cat of
// entity is received and settled at: its own dead-letter sub-queue's for
// the dead-lettered category.
func browsedAddress(entity string, cat Category, m *Message) string {
	if cat != CategoryDeadLettered {
		return entity
	}
	if m.SubQueue == SubQueueTransferDeadLetter {
		return SubQueueAddress(entity, SubQueueTransferDeadLetter)
	}
	return SubQueueAddress(entity, SubQueueDeadLetter)
}

// RequestSearchPlan lists the entities to search for the request of a
// reply in entity: first those whose messages were seen with a ReplyTo
// naming it or its topic (sources maps an entity, in lower case, to them),
// the likely ones; then every queue and subscription of entities (the
// reply's own entity among them), each once.
func RequestSearchPlan(entity string, sources map[string][]string, entities []Entity) (plan []string, likely int) {
	seen := map[string]bool{}
	add := func(p string) {
		if k := strings.ToLower(p); !seen[k] {
			seen[k] = true
			plan = append(plan, p)
		}
	}
	keys := []string{strings.ToLower(entity)}
	if topic, _, ok := strings.Cut(entity, "/Subscriptions/"); ok {
		keys = append(keys, strings.ToLower(topic))
	}
	for _, k := range keys {
		for _, src := range sources[k] {
			add(src)
		}
	}
	likely = len(plan)
	for _, e := range entities {
		if e.Kind != KindTopic {
			add(e.Path)
		}
	}
	add(entity)
	return plan, likely
}
