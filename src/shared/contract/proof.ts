/** Proof of delivery on the wire: the record `GET /delivery/<id>/proof` answers, and what events say of it. */
import type { Point } from "./geo";

export type ProofImageType = "image/jpeg" | "image/png" | "image/webp";

export interface ProofImage {
  /** Absolute API link of the image (needs the same Authorization). */
  url: string;
  type: ProofImageType;
  bytes: number;
}

export interface DeliveryProof {
  id: number;
  delivery_id: number;
  route_id: number;
  driver_id: number | null;
  /** Name of the person who received the delivery. */
  recipient: string | null;
  /** When the driver reported, by the phone's clock (an offline report keeps its original time). */
  reported_at: string | null;
  /** Where the report was made (the phone's position then): a GeoJSON point, `accuracy` in metres beside its coordinates. */
  location: (Point & { accuracy: number | null }) | null;
  /** Deprecated: `location` as `{lat, lng, accuracy}` (the only shape before it). */
  position: { lat: number; lng: number; accuracy: number | null } | null;
  /** Metres between `position` and the delivery address. */
  distance_m: number | null;
  far_from_address: boolean | null;
  /** The code the driver scanned (or typed) at the door. */
  scanned_code: string | null;
  /** Whether `scanned_code` is the delivery's `scancode` (null: nothing scanned, or the delivery has no code). */
  scan_match: boolean | null;
  photo: (ProofImage & { width: number; height: number }) | null;
  signature: ProofImage | null;
  created_at: string;
  updated_at: string;
}

/** What events (`delivery.updated`, websocket `delivery`) say of a proof: that it exists and what it holds, never the images. */
export interface ProofSummary {
  photo: boolean;
  signature: boolean;
  recipient: boolean;
  far_from_address: boolean | null;
  scan_match: boolean | null;
}
