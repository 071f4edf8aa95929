/** Review a Proposal: approve or request changes, with a comment (the API records a comment only
 * as part of a review decision). */
import { Button, Group, Paper, Text, Textarea, Title } from "@mantine/core";
import { useState } from "react";

interface Props {
  onReview: (decision: "approve" | "request_changes", comment: string) => Promise<boolean>;
  disabled: boolean;
  /** False for the Proposal's author: an author's approval does not count (the API refuses it). */
  canApprove?: boolean;
}

export function ReviewForm({ onReview, disabled, canApprove = true }: Props) {
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const send = async (decision: "approve" | "request_changes") => {
    setBusy(decision);
    try {
      if (await onReview(decision, comment)) setComment("");
    } finally {
      setBusy(null);
    }
  };
  return (
    <Paper withBorder p="sm" data-testid="review-form">
      <Title order={5} mb="xs">
        Review
      </Title>
      <Textarea
        placeholder="Comment (optional)"
        value={comment}
        onChange={(e) => setComment(e.currentTarget.value)}
        autosize
        minRows={2}
        data-testid="review-comment"
      />
      <Group mt="xs">
        {canApprove && (
        <Button color="green" onClick={() => send("approve")} loading={busy === "approve"} disabled={disabled} data-testid="review-approve">
          Approve
        </Button>
        )}
        <Button
          color="orange"
          variant="light"
          onClick={() => send("request_changes")}
          loading={busy === "request_changes"}
          disabled={disabled}
          data-testid="review-request-changes"
        >
          Request changes
        </Button>
      </Group>
      {!canApprove && (
        <Text size="xs" c="dimmed" mt={4} data-testid="own-proposal">
          You opened this Proposal: another reviewer approves it.
        </Text>
      )}
    </Paper>
  );
}
