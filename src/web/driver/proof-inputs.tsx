/**
 * What the driver adds to a stop report: the parcel's code (scanned with the
 * browser's BarcodeDetector from a camera picture where Chromium offers it,
 * typed otherwise) checked against the stop, a photo from the camera (scaled
 * to PHOTO_MAX_SIDE px JPEG in the browser: re-encoding through a canvas drops
 * EXIF and its GPS position), and the recipient's signature drawn on a canvas.
 */
import { useEffect, useRef, useState } from "preact/hooks";

/** Longest side of a photo as sent (the service accepts up to 4,096 px and 3 MiB). */
export const PHOTO_MAX_SIDE = 1600;
const PHOTO_QUALITY = 0.8;

/** A camera picture scaled down and re-encoded as JPEG (no metadata survives a canvas). */
export async function scalePhoto(file: Blob, maxSide = PHOTO_MAX_SIDE): Promise<Blob> {
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, maxSide / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext("2d")!.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("The photo could not be encoded"))), "image/jpeg", PHOTO_QUALITY));
}

interface DetectedCode {
  rawValue: string;
}
interface BarcodeDetectorLike {
  detect(image: ImageBitmapSource): Promise<DetectedCode[]>;
}
type BarcodeDetectorClass = new (options?: { formats?: string[] }) => BarcodeDetectorLike;
const detectorClass = (): BarcodeDetectorClass | undefined => (globalThis as unknown as { BarcodeDetector?: BarcodeDetectorClass }).BarcodeDetector;

/** The parcel's code: scanned from a camera picture where the browser can, typed otherwise; warns on a code that is not this stop's. */
export function ScanField({ n, expected, value, onChange }: { n: number; expected: string | null; value: string; onChange: (code: string) => void }) {
  const [note, setNote] = useState("");
  const Detector = detectorClass();
  const scan = async (file: File | undefined) => {
    if (!file || !Detector) return;
    try {
      const codes = await new Detector().detect(await createImageBitmap(file));
      if (codes.length) {
        onChange(codes[0].rawValue);
        setNote("");
      } else setNote("No code found in the picture: type it instead.");
    } catch {
      setNote("Scanning failed: type the code instead.");
    }
  };
  const code = value.trim();
  const mismatch = code !== "" && expected !== null && expected.trim() !== "" && code !== expected.trim();
  const match = code !== "" && expected !== null && code === expected.trim();
  return (
    <div class="scan">
      <label>
        Parcel code for stop {n}
        <input value={value} onInput={(e) => onChange(e.currentTarget.value)} autocomplete="off" inputMode="text" data-testid="scancode" />
      </label>
      {Detector && (
        <label class="button-like">
          Scan with camera
          <input type="file" accept="image/*" capture="environment" class="visually-hidden" onChange={(e) => void scan(e.currentTarget.files?.[0])} />
        </label>
      )}
      {mismatch && (
        <p role="alert" class="warning" data-testid="scan-mismatch">
          ⚠ Wrong parcel? Code {code} is not this stop's ({expected}).
        </p>
      )}
      {match && (
        <p role="status" class="ok" data-testid="scan-match">
          ✓ Parcel matches this stop
        </p>
      )}
      {note && <p role="status">{note}</p>}
    </div>
  );
}

/** A photo from the camera, scaled in the browser; shows a preview. */
export function PhotoField({ n, photo, onChange }: { n: number; photo: Blob | null; onChange: (photo: Blob | null) => void }) {
  const [preview, setPreview] = useState<string | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (!photo) return setPreview(null);
    const url = URL.createObjectURL(photo);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [photo]);
  const pick = async (file: File | undefined) => {
    setError("");
    if (!file) return onChange(null);
    try {
      onChange(await scalePhoto(file));
    } catch {
      setError("This picture cannot be read; take it again.");
      onChange(null);
    }
  };
  return (
    <div class="photo">
      <label>
        Photo for stop {n}
        <input type="file" accept="image/*" capture="environment" data-testid="photo" onChange={(e) => void pick(e.currentTarget.files?.[0])} />
      </label>
      {preview && <img src={preview} alt={`Photo taken at stop ${n}`} class="preview" data-testid="photo-preview" />}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}

/** The recipient signs with a finger (or the mouse); the drawing goes out as a PNG when anything was drawn. */
export function SignaturePad({ n, onChange }: { n: number; onChange: (signature: Blob | null) => void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const drawing = useRef(false);
  const [signed, setSigned] = useState(false);
  const point = (e: PointerEvent) => {
    const c = canvas.current!;
    const box = c.getBoundingClientRect();
    return [((e.clientX - box.left) * c.width) / box.width, ((e.clientY - box.top) * c.height) / box.height] as const;
  };
  const down = (e: PointerEvent) => {
    const ctx = canvas.current!.getContext("2d")!;
    drawing.current = true;
    canvas.current!.setPointerCapture?.(e.pointerId);
    ctx.lineWidth = 3;
    ctx.lineCap = "round";
    ctx.strokeStyle = "#111";
    ctx.beginPath();
    ctx.moveTo(...point(e));
  };
  const move = (e: PointerEvent) => {
    if (!drawing.current) return;
    const ctx = canvas.current!.getContext("2d")!;
    ctx.lineTo(...point(e));
    ctx.stroke();
    setSigned(true);
  };
  const up = () => {
    if (!drawing.current) return;
    drawing.current = false;
    if (signed) canvas.current!.toBlob((b) => onChange(b), "image/png");
  };
  const clear = () => {
    const c = canvas.current!;
    c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
    setSigned(false);
    onChange(null);
  };
  return (
    <div class="signature">
      <span id={`sign-${n}`}>Signature of the recipient (stop {n})</span>
      <canvas
        ref={canvas}
        width={600}
        height={200}
        role="img"
        aria-labelledby={`sign-${n}`}
        data-testid="signature"
        data-signed={signed ? "true" : "false"}
        onPointerDown={down}
        onPointerMove={move}
        onPointerUp={up}
        onPointerLeave={up}
      />
      <button type="button" class="secondary" onClick={clear} disabled={!signed}>
        Clear signature
      </button>
    </div>
  );
}
