/**
 * Create or edit a delivery: its address (picked by search, or a new one,
 * geocoded by `POST /address`), the day and time window in the company's
 * zone, stay, load, notes and whether and how the customer is notified.
 * The service validates; its refusal is shown next to the fields it names.
 */
import { useState } from "preact/hooks";
import { Alert } from "../shared/shell";
import { type Api, ApiError, errorText } from "../shared/api";
import { dayOf, time, timeZone, zonedIso } from "../shared/format";
import type { Address, Delivery } from "../shared/types";
import { AddressSearch, addressLabel } from "./address-search";

/** The form's parts, and which API fields each one shows the errors of. */
const PARTS = {
  address: ["deliverylocation_id", "supplierlocation_id"],
  newaddress: ["contactcompany", "street", "housenumber", "postalcode", "city", "country", "location", "lat", "lng"],
  window: ["pdt_from", "pdt_to"],
  els: ["els"],
  load: ["load"],
  skills: ["required_skills"],
  custom_id: ["custom_id"],
  notes: ["notes"],
  notify: ["notify_customer", "notify_customer_email", "notify_customer_sms"],
} as const;
type Part = keyof typeof PARTS;

/** `required_skills.2` is a part of the skills field. */
const partOf = (field: string): Part | undefined => (Object.keys(PARTS) as Part[]).find((p) => (PARTS[p] as readonly string[]).includes(field.replace(/\.\d+$/, "")));

interface NewAddress {
  contactcompany: string;
  street: string;
  housenumber: string;
  postalcode: string;
  city: string;
  country: string;
}

const emptyAddress: NewAddress = { contactcompany: "", street: "", housenumber: "", postalcode: "", city: "", country: "DE" };

interface Props {
  api: Api;
  /** The console's day: a new delivery's default day. */
  day: string;
  /** The delivery to edit; none: a new one. */
  delivery?: Delivery;
  onDone: (saved: Delivery) => void;
  onCancel: () => void;
}

export function DeliveryForm({ api, day, delivery, onDone, onCancel }: Props) {
  const [address, setAddress] = useState<Address | null>(delivery?.address ?? null);
  const [creating, setCreating] = useState(false);
  const [fresh, setFresh] = useState<NewAddress>(emptyAddress);
  const [date, setDate] = useState(delivery?.pdt_from ? dayOf(delivery.pdt_from) : day);
  const [from, setFrom] = useState(delivery?.pdt_from ? time(delivery.pdt_from) : "08:00");
  const [to, setTo] = useState(delivery?.pdt_to ? time(delivery.pdt_to) : "12:00");
  const [els, setEls] = useState(String(delivery?.els ?? 5));
  const [load, setLoad] = useState(String(delivery?.load ?? 1));
  const [skills, setSkills] = useState((delivery?.required_skills ?? []).join(", "));
  const [customId, setCustomId] = useState(delivery?.custom_id ?? "");
  const [notes, setNotes] = useState(delivery?.notes ?? "");
  const [notify, setNotify] = useState(delivery?.notify_customer ?? false);
  const [byEmail, setByEmail] = useState(delivery?.notify_customer_email ?? true);
  const [bySms, setBySms] = useState(delivery?.notify_customer_sms ?? false);
  const [errors, setErrors] = useState<Partial<Record<Part, string>>>({});
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const prefix = delivery ? `edit-${delivery.id}` : "new-delivery";
  const errorId = (part: Part) => (errors[part] ? `${prefix}-${part}-error` : undefined);
  const fieldError = (part: Part) =>
    errors[part] && (
      <span class="field-error error" id={errorId(part)}>
        {errors[part]}
      </span>
    );

  /** A refusal: its message next to every part it names; what names no part goes to the form's alert. */
  const refused = (err: unknown) => {
    const fields = err instanceof ApiError ? err.fields : [];
    const parts = [...new Set(fields.map(partOf).filter((p): p is Part => p !== undefined))];
    setErrors(Object.fromEntries(parts.map((p) => [p, errorText(err)])));
    setMessage(`Not saved: ${errorText(err)}`);
  };

  const number = (s: string) => (s.trim() === "" ? null : Number(s));
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setMessage("");
    try {
      let target = address;
      if (creating) {
        target = await api.send("POST", "/address", { body: Object.fromEntries(Object.entries(fresh).filter(([, v]) => v.trim() !== "")) });
        // Stored: a second try (after a refusal of the delivery) must not store it again.
        setAddress(target);
        setCreating(false);
      }
      const body = {
        ...(target ? { deliverylocation_id: target.id } : {}),
        pdt_from: from ? zonedIso(date, from) : null,
        pdt_to: to ? zonedIso(date, to) : null,
        els: number(els),
        load: number(load),
        required_skills: skills.split(",").map((s) => s.trim()).filter(Boolean),
        custom_id: customId.trim() || null,
        notes: notes.trim() || null,
        notify_customer: notify,
        notify_customer_email: notify ? byEmail : null,
        notify_customer_sms: notify ? bySms : null,
      };
      const saved = delivery ? await api.send("PATCH", "/delivery", { body: { id: delivery.id, ...body } }) : await api.send("POST", "/delivery", { body });
      onDone(saved);
    } catch (err) {
      refused(err);
    } finally {
      setBusy(false);
    }
  };

  const text = (part: Part, label: string, value: string, set: (v: string) => void, attrs: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input value={value} onInput={(e) => set(e.currentTarget.value)} aria-invalid={errors[part] ? true : undefined} aria-describedby={errorId(part)} {...attrs} />
      {fieldError(part)}
    </label>
  );

  return (
    <form class="delivery-form" onSubmit={submit} aria-labelledby={`${prefix}-title`} data-testid="delivery-form" noValidate>
      <h3 id={`${prefix}-title`}>{delivery ? `Edit delivery ${delivery.custom_id ?? delivery.id}` : "New delivery"}</h3>
      {creating ? (
        <fieldset class="new-address">
          <legend>New address</legend>
          {(
            [
              ["contactcompany", "Company or name"],
              ["street", "Street"],
              ["housenumber", "No."],
              ["postalcode", "Postal code"],
              ["city", "City"],
              ["country", "Country"],
            ] as const
          ).map(([key, label]) => (
            <label key={key}>
              {label}
              <input
                name={key}
                value={fresh[key]}
                onInput={(e) => setFresh({ ...fresh, [key]: e.currentTarget.value })}
                aria-invalid={errors.newaddress ? true : undefined}
                aria-describedby={errorId("newaddress")}
              />
            </label>
          ))}
          {fieldError("newaddress")}
          <button type="button" class="secondary" onClick={() => setCreating(false)}>
            Search stored addresses instead
          </button>
        </fieldset>
      ) : (
        <div class="address-part">
          <AddressSearch api={api} id={`${prefix}-address`} value={address} onChange={setAddress} errorId={errorId("address")} />
          {address && <p class="muted picked">Delivers to {addressLabel(address)}</p>}
          {fieldError("address")}
          <button type="button" class="secondary" onClick={() => setCreating(true)}>
            New address…
          </button>
        </div>
      )}
      <fieldset class="window" aria-describedby={errorId("window")}>
        <legend>Time window ({timeZone()})</legend>
        <label>
          Delivery day
          <input type="date" value={date} onInput={(e) => setDate(e.currentTarget.value)} name="day" />
        </label>
        <label>
          From
          <input type="time" value={from} onInput={(e) => setFrom(e.currentTarget.value)} name="pdt_from" aria-invalid={errors.window ? true : undefined} />
        </label>
        <label>
          To
          <input type="time" value={to} onInput={(e) => setTo(e.currentTarget.value)} name="pdt_to" aria-invalid={errors.window ? true : undefined} />
        </label>
        {fieldError("window")}
      </fieldset>
      <div class="pair">
        {text("els", "Stay (minutes)", els, setEls, { type: "number", min: 0, name: "els" })}
        {text("load", "Load", load, setLoad, { type: "number", min: 0, name: "load" })}
      </div>
      {text("skills", "Needs skills (comma-separated, e.g. refrigerated, tail-lift)", skills, setSkills, { name: "required_skills" })}
      {text("custom_id", "Reference", customId, setCustomId, { name: "custom_id" })}
      <label>
        Notes for the driver
        <textarea value={notes} onInput={(e) => setNotes(e.currentTarget.value)} name="notes" rows={2} aria-invalid={errors.notes ? true : undefined} aria-describedby={errorId("notes")} />
        {fieldError("notes")}
      </label>
      <fieldset class="notify">
        <legend>Customer notification</legend>
        <label class="inline">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.currentTarget.checked)} name="notify_customer" /> Notify the customer of the arrival time
        </label>
        <label class="inline">
          <input type="checkbox" checked={byEmail} disabled={!notify} onChange={(e) => setByEmail(e.currentTarget.checked)} name="notify_customer_email" /> by email
        </label>
        <label class="inline">
          <input type="checkbox" checked={bySms} disabled={!notify} onChange={(e) => setBySms(e.currentTarget.checked)} name="notify_customer_sms" /> by SMS
        </label>
        {fieldError("notify")}
      </fieldset>
      <Alert text={message} />
      <div class="form-actions">
        <button type="submit" disabled={busy}>
          {delivery ? "Save delivery" : "Create delivery"}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Close
        </button>
      </div>
    </form>
  );
}
