CREATE TABLE `tracking_links` (
	`token` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`delivery_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tracking_links_delivery` ON `tracking_links` (`company_id`,`delivery_id`);