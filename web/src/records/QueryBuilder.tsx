/**
 * The query builder: Kind or Trait, conditions (Attribute, operator, value, "not"), combined with
 * and/or, then select, order, group-by and page size. It edits a QueryState; queryModel turns it
 * into the DSL. Only the names the schema answer holds are offered, and a condition's value is picked
 * as its Attribute's type says: an enum's values in a list, a date in a date input, a number in a
 * number input with the comparisons (the operators offered are those of the type).
 */
import {
  ActionIcon,
  Button,
  Checkbox,
  Group,
  MultiSelect,
  NativeSelect,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Text,
  TextInput,
} from "@mantine/core";
import type { AttributeSpec, Schema } from "../api/types";
import { attributeSpecs, operatorsFor, queryAttributes, valueType } from "./attributes";
import { OPERATOR_LABELS, emptyQuery, type Condition, type Operator, type QueryState } from "./queryModel";

interface Props {
  schema: Schema;
  state: QueryState;
  onChange: (state: QueryState) => void;
}

export function QueryBuilder({ schema, state, onChange }: Props) {
  const attributes = queryAttributes(schema, state);
  const specs = attributeSpecs(schema, state);
  const names = state.target === "kind" ? schema.kinds.map((k) => k.name) : schema.traits.map((t) => t.name);
  const set = (patch: Partial<QueryState>) => onChange({ ...state, ...patch });
  const setCondition = (index: number, patch: Partial<Condition>) =>
    set({ conditions: state.conditions.map((c, i) => (i === index ? { ...c, ...patch } : c)) });

  return (
    <Stack gap="sm" data-testid="query-builder">
      <Group align="flex-end">
        <SegmentedControl
          value={state.target}
          onChange={(value) => {
            const target = value as QueryState["target"];
            const first = target === "kind" ? schema.kinds[0]?.name : schema.traits[0]?.name;
            onChange({ ...emptyQuery(first ?? ""), target, limit: state.limit });
          }}
          data={[
            { value: "kind", label: "Kind" },
            { value: "trait", label: "Trait", disabled: schema.traits.length === 0 },
          ]}
        />
        <Select
          label={state.target === "kind" ? "Kind" : "Trait"}
          data={names}
          value={state.name || null}
          onChange={(name) => onChange({ ...emptyQuery(name ?? ""), target: state.target, limit: state.limit })}
          searchable
          w={240}
          data-testid="query-kind"
        />
      </Group>

      <Stack gap={6}>
        <Group gap="xs">
          <Text size="sm" fw={600}>
            Conditions
          </Text>
          {state.conditions.length > 1 && (
            <SegmentedControl
              size="xs"
              value={state.combine}
              onChange={(combine) => set({ combine: combine as QueryState["combine"] })}
              data={[
                { value: "and", label: "all (and)" },
                { value: "or", label: "any (or)" },
              ]}
            />
          )}
        </Group>
        {state.conditions.map((condition, index) => (
          <Group key={index} gap="xs" align="center" data-testid="condition">
            <Checkbox
              label="not"
              checked={condition.negate}
              onChange={(e) => setCondition(index, { negate: e.currentTarget.checked })}
            />
            <Select
              placeholder="Attribute"
              data={attributes.includes(condition.attr) || !condition.attr ? attributes : [condition.attr, ...attributes]}
              value={condition.attr || null}
              onChange={(attr) => {
                // A new Attribute keeps the operator when its type offers it, and starts with no value.
                const ops = operatorsFor(valueType(specs[attr ?? ""]));
                setCondition(index, { attr: attr ?? "", op: ops.includes(condition.op) ? condition.op : "eq", value: "" });
              }}
              searchable
              w={200}
              aria-label="Attribute"
            />
            <Select
              data={operatorsFor(valueType(specs[condition.attr])).map((op) => ({ value: op, label: OPERATOR_LABELS[op] }))}
              value={condition.op}
              onChange={(op) => setCondition(index, { op: (op ?? "eq") as Operator })}
              w={190}
              aria-label="Operator"
            />
            <ValueInput condition={condition} spec={specs[condition.attr]} onChange={(value) => setCondition(index, { value })} />
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label="Remove condition"
              onClick={() => set({ conditions: state.conditions.filter((_, i) => i !== index) })}
            >
              ✕
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button
            size="xs"
            variant="light"
            onClick={() => set({ conditions: [...state.conditions, { attr: attributes[0] ?? "", op: "eq", value: "", negate: false }] })}
            disabled={!state.name}
          >
            Add condition
          </Button>
        </Group>
      </Stack>

      <Group align="flex-end" grow>
        <MultiSelect
          label="Select"
          placeholder="every Attribute"
          data={attributes}
          value={state.select}
          onChange={(select) => set({ select })}
          disabled={Boolean(state.groupBy)}
          searchable
          clearable
        />
        <MultiSelect
          label="Order by"
          placeholder="Kind, key"
          data={attributes.flatMap((a) => [
            { value: a, label: `${a} ↑` },
            { value: `-${a}`, label: `${a} ↓` },
          ])}
          value={state.orderBy}
          onChange={(orderBy) => set({ orderBy })}
          disabled={Boolean(state.groupBy)}
          searchable
          clearable
        />
        <Select
          label="Group by (counts)"
          placeholder="no grouping"
          data={attributes}
          value={state.groupBy || null}
          onChange={(groupBy) => set({ groupBy: groupBy ?? "" })}
          clearable
          data-testid="query-group-by"
        />
        <NumberInput
          label="Page size"
          min={1}
          max={1000}
          value={state.limit}
          onChange={(limit) => set({ limit: typeof limit === "number" ? limit : 50 })}
          disabled={Boolean(state.groupBy)}
        />
      </Group>
    </Stack>
  );
}

/** A condition's value, picked as its Attribute's type says (free text for a list, a flag "is
 * missing" and text). */
function ValueInput({ condition, spec, onChange }: { condition: Condition; spec?: AttributeSpec; onChange: (value: string) => void }) {
  const type = valueType(spec);
  const common = { w: 220, "aria-label": "Value", value: condition.value };
  if (condition.op === "is_null") {
    return <NativeSelect {...common} data={["true", "false"]} value={condition.value || "true"} onChange={(e) => onChange(e.currentTarget.value)} />;
  }
  if (condition.op !== "in" && type === "enum") {
    const values = spec?.values ?? [];
    return (
      <NativeSelect
        {...common}
        data={[{ value: "", label: "choose a value" }, ...values.map((v) => ({ value: v, label: v }))]}
        onChange={(e) => onChange(e.currentTarget.value)}
        data-value-type="enum"
      />
    );
  }
  if (condition.op !== "in" && type === "boolean") {
    return <NativeSelect {...common} data={["", "true", "false"]} onChange={(e) => onChange(e.currentTarget.value)} />;
  }
  if (condition.op !== "in" && type === "date") {
    return <TextInput {...common} type="date" onChange={(e) => onChange(e.currentTarget.value)} data-value-type="date" />;
  }
  if (condition.op !== "in" && (type === "integer" || type === "decimal")) {
    return (
      <TextInput
        {...common}
        type="number"
        step={type === "integer" ? 1 : "any"}
        min={spec?.min ?? undefined}
        max={spec?.max ?? undefined}
        onChange={(e) => onChange(e.currentTarget.value)}
        data-value-type="number"
      />
    );
  }
  return (
    <TextInput
      {...common}
      placeholder={condition.op === "in" ? "a, b, c" : "value"}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}
