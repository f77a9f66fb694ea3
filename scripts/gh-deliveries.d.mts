// Types of scripts/gh-deliveries.mjs (imported by scripts/solve-as-service.ts).
export declare const SECONDS_PER_UNIT: number;
export declare const CAR_KMH: number;
export declare const CIRCUITY: number;
export declare const METRES_PER_UNIT: number;
export declare const DEPOT: { lat: number; lng: number };
export interface InstanceRow {
  id: number;
  x: number;
  y: number;
  demand: number;
  ready: number;
  due: number;
  service: number;
}
export interface Instance {
  name: string;
  fleet: number;
  capacity: number;
  depot: InstanceRow;
  customers: InstanceRow[];
}
export declare function parseInstance(text: string): Instance;
export interface DeliveryData {
  lat: number;
  lng: number;
  custom_id: string;
  pdt_from: string;
  pdt_to: string;
  els: number;
  load: number;
}
export interface VehicleData {
  name: string;
  capacity_1: number;
  departure_time_from: string;
  return_time_to: string;
}
export declare function routingRequest(
  instance: Instance,
  day: Date,
  vehicles: number,
): { deliverydata: DeliveryData[]; vehicles: VehicleData[]; startaddress: { lat: number; lng: number; city: string } };
