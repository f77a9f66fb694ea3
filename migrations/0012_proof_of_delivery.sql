CREATE TABLE `delivery_proofs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`delivery_id` integer NOT NULL,
	`route_id` integer NOT NULL,
	`driver_id` integer,
	`recipient` text,
	`photo_key` text,
	`photo_type` text,
	`photo_bytes` integer,
	`photo_width` integer,
	`photo_height` integer,
	`signature_key` text,
	`signature_type` text,
	`signature_bytes` integer,
	`reported_at` text,
	`lat` real,
	`lng` real,
	`accuracy` real,
	`distance_m` real,
	`far_from_address` integer,
	`scanned_code` text,
	`scan_match` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `delivery_proofs_report` ON `delivery_proofs` (`company_id`,`delivery_id`,`route_id`);--> statement-breakpoint
CREATE INDEX `delivery_proofs_company_age` ON `delivery_proofs` (`company_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `companies` ADD `proof_retention_days` integer DEFAULT 90 NOT NULL;--> statement-breakpoint
ALTER TABLE `companies` ADD `proof_on_tracking_page` integer DEFAULT false NOT NULL;