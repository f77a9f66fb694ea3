/**
 * Type-ahead search of the company's addresses (`GET /searchaddress`) as an
 * ARIA combobox: the list opens while typing, arrow keys move through it,
 * Enter picks, Escape closes; the number of results is announced.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { addressLine, personName } from "../shared/format";
import type { Address } from "../shared/types";

const LIMIT = 8;
const DEBOUNCE_MS = 200;

/** The search expression for what was typed: every word must match, the last one as a prefix. */
export function searchQuery(typed: string): string | null {
  const words = typed.split(/[\s"*()]+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  return words.length ? `${words.join(" ")}*` : null;
}

export const addressLabel = (a: Address) =>
  [a.contactcompany || personName({ firstname: a.contactfirstname, lastname: a.contactlastname }), addressLine(a)].filter(Boolean).join(", ") || `Address ${a.id}`;

interface Props {
  api: Api;
  id: string;
  value: Address | null;
  onChange: (a: Address | null) => void;
  /** Id of the element describing an error of this field, when there is one. */
  errorId?: string;
}

export function AddressSearch({ api, id, value, onChange, errorId }: Props) {
  const [text, setText] = useState(value ? addressLabel(value) : "");
  const [results, setResults] = useState<Address[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [note, setNote] = useState("");
  const seq = useRef(0);
  const listId = `${id}-list`;

  useEffect(() => {
    const query = searchQuery(text);
    if (!open || !query) {
      setResults([]);
      return;
    }
    const mine = ++seq.current;
    const timer = window.setTimeout(async () => {
      try {
        const found = await api.get("/searchaddress", { query: { query, limit: LIMIT, citocode: true } });
        if (mine !== seq.current) return; // an older answer arriving late
        setResults(found.objects);
        setActive(found.objects.length ? 0 : -1);
        setNote(found.objects.length ? `${found.objects.length} addresses found; arrow keys to choose, Enter to pick` : "No address found");
      } catch (err) {
        if (mine === seq.current) setNote(errorText(err));
      }
    }, DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [api, text, open]);

  const pick = (a: Address) => {
    onChange(a);
    setText(addressLabel(a));
    setOpen(false);
    setNote(`Picked ${addressLabel(a)}`);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setOpen(true);
      if (results.length) setActive((i) => (i + (e.key === "ArrowDown" ? 1 : results.length - 1)) % results.length);
    } else if (e.key === "Enter" && open && results[active]) {
      e.preventDefault();
      pick(results[active]);
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      setOpen(false);
    }
  };

  const expanded = open && results.length > 0;
  return (
    <div class="combobox">
      <label for={id}>Address (search by company, name, postal code or city)</label>
      <input
        id={id}
        type="text"
        role="combobox"
        autocomplete="off"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={expanded && active >= 0 ? `${listId}-${active}` : undefined}
        aria-invalid={errorId ? true : undefined}
        aria-describedby={errorId}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setOpen(true);
          if (value) onChange(null);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setOpen(false)}
      />
      <ul id={listId} role="listbox" aria-label="Addresses found" class="combobox-list" hidden={!expanded}>
        {results.map((a, i) => (
          <li
            key={a.id}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === active}
            data-address-id={a.id}
            // mousedown, not click: the input's blur would close the list first
            onMouseDown={(e) => {
              e.preventDefault();
              pick(a);
            }}
          >
            {addressLabel(a)}
          </li>
        ))}
      </ul>
      <span class="visually-hidden" role="status" aria-live="polite">
        {note}
      </span>
    </div>
  );
}
