"""Feed: the change feed (commits on NATS JetStream; the event stream, polling and webhooks later)."""
