CREATE TABLE `route_reports` (
	`route_id` integer PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`day` text NOT NULL,
	`driver_id` integer,
	`figures` text NOT NULL,
	`version` integer NOT NULL,
	`computed_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `route_reports_company_day` ON `route_reports` (`company_id`,`day`);--> statement-breakpoint
ALTER TABLE `vehicles` ADD `co2e_g_per_km` real;