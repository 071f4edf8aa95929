/** A screen that fails to render says so (and how to recover) instead of leaving a blank page. */
import { Alert, Button } from "@mantine/core";
import { Component, type ReactNode } from "react";

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<{ children: ReactNode; resetKey?: string }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  componentDidUpdate(previous: { resetKey?: string }) {
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: null });
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <Alert color="red" title="This screen failed to render" role="alert">
        {this.state.error.message}
        <div>
          <Button mt="sm" size="xs" variant="light" onClick={() => this.setState({ error: null })}>
            Try again
          </Button>
        </div>
      </Alert>
    );
  }
}
