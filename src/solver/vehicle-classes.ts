import type { VehicleClass, VehicleClassId } from "./types";

/** Vehicle classes of the embedded travel model (served by `GET /vehicletype`). */
export const VEHICLE_CLASSES: readonly VehicleClass[] = [
  {
    id: "car",
    name: "Car / van",
    speedKmh: 40,
    restrictions: "None in the embedded model; all roads allowed.",
  },
  {
    id: "truck",
    name: "Truck",
    speedKmh: 32,
    restrictions:
      "Slower average speed; height, weight and access restrictions apply only with a road-network matrix provider.",
  },
  {
    id: "bicycle",
    name: "Cargo bicycle",
    speedKmh: 15,
    restrictions: "No motorways; unaffected by traffic (speed factors are not applied).",
  },
];

export function vehicleClass(id: VehicleClassId): VehicleClass {
  const found = VEHICLE_CLASSES.find((c) => c.id === id);
  if (!found) throw new Error(`unknown vehicle class ${id}`);
  return found;
}
