/**
 * A problem from the API as a readable message: its title, what to change (detail), the members
 * that went wrong (issues) and the calls that move things forward (next).
 */
import { Alert, List, Text } from "@mantine/core";
import { ApiProblem } from "../api/problem";

export function ProblemAlert({ error, title }: { error: unknown; title?: string }) {
  if (error === null || error === undefined) return null;
  if (!(error instanceof ApiProblem)) {
    const message = error instanceof Error ? error.message : String(error);
    return (
      <Alert color="red" title={title ?? "Something went wrong"} role="alert">
        {message}
      </Alert>
    );
  }
  const forbidden = error.status === 403;
  return (
    <Alert
      color={error.status >= 500 || error.status === 0 ? "red" : forbidden ? "yellow" : "orange"}
      title={forbidden ? `${title ? `${title}: y` : "Y"}ou do not have permission` : (title ?? error.title)}
      role="alert"
      data-problem={error.code}
      data-permission={forbidden ? "denied" : undefined}
    >
      <Text size="sm">{error.detail}</Text>
      {forbidden && (
        <Text size="sm" mt={4}>
          Your grants on this Domain do not allow it; a Domain admin can grant what is missing.
        </Text>
      )}
      {error.issues.length > 0 && (
        <List size="sm" mt="xs">
          {error.issues.map((issue, i) => (
            <List.Item key={i}>
              <Text span ff="monospace" size="sm">
                {issue.path || "(body)"}
              </Text>
              : {issue.message}
            </List.Item>
          ))}
        </List>
      )}
      {error.next.length > 0 && (
        <List size="sm" mt="xs">
          {error.next.map((n, i) => (
            <List.Item key={i}>
              <b>{n.action}</b>: {n.detail}
            </List.Item>
          ))}
        </List>
      )}
      <Text size="xs" c="dimmed" mt="xs">
        {error.status > 0 ? `${error.status} ${error.code}` : error.code}
      </Text>
    </Alert>
  );
}
